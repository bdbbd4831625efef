/**
 * "Did you mean": the known word a mistyped one most likely meant (a command, a flag, a --type).
 * Close enough is a small edit distance for the word's length (a typo, a swapped or missing
 * letter), or one word starting with the other (`php` for `phpserver`, `nodejs` for `node`).
 */
import { distance } from 'fastest-levenshtein';

export function closest(input: string, candidates: readonly string[]): string | undefined {
  const typed = input.toLowerCase();
  if (!typed) return undefined;
  let best: { word: string; d: number } | undefined;
  for (const word of candidates) {
    const w = word.toLowerCase();
    if (w === typed) return word;
    const d = distance(typed, w);
    // One edit in a short word, two from five letters on, or two neighbours swapped:
    // `chek` → check, `biuld` → build, `tpye` → type; not `nope` → type.
    const near = d <= (w.length <= 4 ? 1 : w.length <= 8 ? 2 : 3) || swapped(typed, w);
    const prefix = Math.min(typed.length, w.length) >= 3 && (w.startsWith(typed) || typed.startsWith(w));
    if ((near || prefix) && (!best || d < best.d)) best = { word, d };
  }
  return best?.word;
}

/** Whether `a` is `b` with two neighbouring letters swapped. */
function swapped(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  // eslint-disable-next-line @typescript-eslint/no-misused-spread -- flag and variable names: one code point is one character
  const diff = [...a].flatMap((ch, i) => (ch === b[i] ? [] : [i]));
  return diff.length === 2 && diff[1] === diff[0]! + 1 && a[diff[0]!] === b[diff[1]] && a[diff[1]] === b[diff[0]!];
}
