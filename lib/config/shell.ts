/**
 * The reader (read.ts) rendered as POSIX sh, for the launch scripts that run with no Node.js
 * (lib/launch/direct.ts): the same trimming (whitespace only is unset) and the same rule for each
 * kind a launch script reads. The script is written at build and run at launch, so the rules come
 * from the declarations here, and test/config/shell.test.ts runs both readers on the same values.
 *
 * Each reader leaves the value in a shell variable; a value that breaks its kind's rule sets `bad`
 * (the first one only) to the variable's name, `badValue` to the value and `badWhy` to what the
 * script says of it when it hands over; `invalidLines` print the variable's own user error, rendered
 * here, around the value.
 * A kind the script cannot read fully in sh (`seconds` beyond plain decimals: 1e3, 0x10) is handed
 * over too (`hand`, with why), never refused.
 */
import { renderUserError } from '../errors.ts';
import { describeKind } from './kinds.ts';
import { invalid, spec } from './read.ts';

/** A word for sh: single-quoted. */
export function shQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** The sh functions the readers use: `trim` sets `t`; `set_` says whether a value is more than whitespace. */
export const SH_READ_HELPERS = [
  '# Whitespace only counts as unset (lib/config).',
  'set_() { case ${1-} in *[![:space:]]*) return 0 ;; *) return 1 ;; esac; }',
  'trim() { t=${1-}; t=${t#"${t%%[![:space:]]*}"}; t=${t%"${t##*[![:space:]]}"}; }',
  '# Leading zeros dropped (sh arithmetic reads 010 as octal).',
  'unzero() { z=$1; while case $z in 0?*) true ;; *) false ;; esac; do z=${z#0}; done; }',
  '# A plain decimal number of seconds (12, 0.5, .25) as microseconds in `us`; 1 for anything else.',
  'seconds_us() {',
  '  case $1 in',
  "    '' | . | *[!0-9.]* | *.*.*) return 1 ;;",
  '  esac',
  '  i=${1%%.*}; f=',
  '  case $1 in *.*) f=${1#*.} ;; esac',
  '  f=${f}000000; f=${f%"${f#??????}"}',
  '  unzero "${i:-0}"; i=$z; unzero "$f"; f=$z',
  '  us=$((i * 1000000 + f))',
  '}',
];

/**
 * sh that reads `name` into `$target` by its kind: unset (or whitespace) gives the declared default
 * (`''` without one). Kinds: port (a number), enum (the text), seconds (microseconds), bytes (a number).
 */
export function shRead(name: string, target: string): string[] {
  const s = spec(name);
  const k = s.kind;
  const lines = [`trim "\${${name}-}"`];
  switch (k.type) {
    case 'port': {
      const dflt = s.default ?? '';
      lines.push(
        'unzero "$t"',
        `case $z in '') ${target}=${shQuote(dflt)} ;; *[!0-9]* | ??????*) ${bad(name)} ;; *) if [ "$z" -ge 1 ] && [ "$z" -le 65535 ]; then ${target}=$z; else ${bad(name)}; fi ;; esac`,
      );
      return lines;
    }
    case 'enum':
      lines.push(`case $t in '') ${target}=${shQuote(s.default ?? '')} ;; ${k.values.map(shQuote).join(' | ')}) ${target}=$t ;; *) ${bad(name)} ;; esac`);
      return lines;
    case 'seconds': {
      const dflt = s.default === undefined ? "''" : String(Math.round(Number(s.default) * 1e6));
      lines.push(
        `if [ -z "$t" ]; then ${target}=${dflt}`,
        `elif seconds_us "$t" && [ "$us" -gt 0 ]; then ${target}=$us`,
        `else hand "${name}=$t: the launch script reads a plain decimal number of seconds greater than 0"; fi`,
      );
      return lines;
    }
    case 'bytes':
      // Digits only and more than 0; a number too long to be sure it is a safe integer in sh goes to the Node.js launcher.
      lines.push(
        `case $t in '') ${target}= ;; *[!0-9]*) ${bad(name)} ;; *)`,
        '  unzero "$t"',
        `  if [ \${#z} -gt 15 ]; then hand "${name}=$t: the launch script reads numbers of up to 15 digits"; elif [ "$z" -gt 0 ]; then ${target}=$z; else ${bad(name)}; fi ;;`,
        'esac',
      );
      return lines;
    default:
      throw new Error(`lib/config/shell.ts: no sh reader for ${name} (kind ${k.type})`);
  }
}

/** What the script says when it hands an invalid value over to the Node.js launcher. */
function badWhy(name: string): string {
  const k = spec(name).kind;
  return k.type === 'port' ? `${name} is not a port` : `${name} is not ${describeKind(k)}`;
}

const bad = (name: string) => `{ [ -n "$bad" ] || { bad=${name}; badValue=$t; badWhy=${shQuote(badWhy(name))}; }; }`;

/** renderUserError's block for `value`, as sh printf arguments: the text around the value. */
export function renderedAround(render: (value: string) => string): [string, string] {
  const mark = '\u0001value\u0001';
  const [before, after] = render(mark).split(JSON.stringify(mark));
  return [before!, after ?? ''];
}

/** sh that prints `name`'s own user error (config/<name>/invalid) around the value seen and exits 1, when `bad` names it. */
export function invalidLines(name: string): string[] {
  const [before, after] = renderedAround((value) => renderUserError(invalid(spec(name), value).data));
  return [`if [ "$bad" = ${name} ]; then printf '%s%s%s\\n' ${shQuote(before)} "\\"$badValue\\"" ${shQuote(after)} >&2; exit 1; fi`];
}
