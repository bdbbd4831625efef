/**
 * OUT's generations. OUT is always a real folder holding one complete build; a build fills the
 * next generation beside it, `OUT.rbp-next` (which its buildpacks see at OUT's own path:
 * out-namespace.ts), and switches it in with one exchange of the two folders' names (exchange.ts),
 * so that any reader of OUT (`cp -a OUT`, the app's own launcher, a container mounting it, a file
 * sync) finds the previous complete build or the new one, never a part of either. The previous
 * generation is then removed, or kept in `OUT.rbp-old/` while an app started from it still runs
 * (in-use.ts), and removed by a later build or `rbp prune` once nothing runs from it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { checkpoint } from './checkpoint.ts';
import { exchange } from './exchange.ts';
import { identity, isDir, rmrf } from './fsops.ts';
import { generationInUse } from './in-use.ts';

export const nextOf = (out: string) => `${out}.rbp-next`;
export const oldOf = (out: string) => `${out}.rbp-old`;

/** The generations kept in OUT.rbp-old/ (their folders). */
export function oldGenerations(out: string): string[] {
  const dir = oldOf(out);
  try {
    return fs.readdirSync(dir).map((n) => path.join(dir, n));
  } catch {
    return [];
  }
}

/** Moves a generation out of the way into OUT.rbp-old/ (a name of its own), or returns where it already is. */
export function setAside(out: string, gen: string): string {
  if (path.dirname(gen) === oldOf(out)) return gen;
  fs.mkdirSync(oldOf(out), { recursive: true });
  const to = path.join(oldOf(out), (identity(gen) ?? `${Date.now()}-${process.pid}`).replace(/[^\w-]/g, '-'));
  fs.renameSync(gen, to);
  return to;
}

/** Removes the generation unless an app runs from it; returns whether it is gone. */
export function removeUnlessInUse(out: string, gen: string): boolean {
  if (generationInUse(out, gen)) return false;
  rmrf(gen);
  try {
    fs.rmdirSync(oldOf(out));
  } catch {
    // other generations are kept, or it is gone
  }
  return true;
}

/**
 * What killed builds left (a generation being filled, or the previous one of a switch not carried
 * through) and generations nothing runs from any more: removed. Only when no build runs into OUT.
 * Returns how many generations are kept because an app runs from them.
 */
export function sweepGenerations(out: string): number {
  if (isDir(nextOf(out))) removeUnlessInUse(out, setAside(out, nextOf(out)));
  let kept = 0;
  for (const gen of oldGenerations(out)) if (!removeUnlessInUse(out, gen)) kept++;
  return kept;
}

/**
 * Switches OUT to the generation `next` (complete). An empty OUT (none before: the folder made
 * for the namespace's mount) is replaced by one rename; else the two folders exchange their names.
 * Returns where the previous generation is now, and a note when the switch could not be one step.
 */
export function switchOut(out: string, next: string): { previous?: string; note?: string } {
  if (fs.readdirSync(out).length === 0) {
    fs.renameSync(next, out);
    return {};
  }
  const why = exchange(next, out);
  if (!why) return { previous: next };
  // No renameat2 here (or not on this file system): two renames, with an instant without OUT
  // between them; a build killed right there is carried through by the next rbp (recover).
  fs.mkdirSync(oldOf(out), { recursive: true });
  const previous = path.join(oldOf(out), (identity(out) ?? `${Date.now()}-${process.pid}`).replace(/[^\w-]/g, '-'));
  fs.renameSync(out, previous);
  checkpoint('switch-halfway');
  try {
    fs.renameSync(next, out);
  } catch (e) {
    fs.renameSync(previous, out);
    throw e;
  }
  return { previous, note: `${out} was switched to the new build in two renames, not one (${why}): for an instant there was no ${path.basename(out)}` };
}
