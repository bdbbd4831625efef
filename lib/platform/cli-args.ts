/**
 * Reading a command's flags from the command line, every mistake its own user error: an unknown
 * flag (with the flag it most likely meant, or the command that has it), a flag without its value,
 * a value given to a switch, a single-valued flag given twice. Node.js's parseArgs reads the
 * tokens; what they mean is decided here, so no message of Node.js's own reaches the user.
 */
import { parseArgs } from 'node:util';
import { UserError } from '../errors.ts';
import { closest } from '../suggest.ts';
import { COMMANDS, parseOptions, type Command, type Flag } from './cli-commands.ts';

export type FlagValues = Record<string, string | boolean | string[] | undefined>;

/** Flags of `pack build` that rbp has in another form. */
const PACK_FLAGS: Record<string, string> = {
  path: 'rbp takes the application folder as its argument: rbp build APP --out OUT.',
  builder: 'rbp runs the buildpacks itself and needs no builder image (rbp builder writes one for pack).',
};

function flagError(id: string, title: string, raw: string, rule: string, fix: string): UserError {
  return new UserError({ id, title, seen: { what: 'flag', value: raw }, rule, fix });
}

function flagNames(c: Command): string {
  return c.flags.map((f) => `--${f.name}`).join(', ');
}

function unknownFlag(c: Command, raw: string): UserError {
  const name = raw.replace(/^-+/, '');
  const long = raw.startsWith('--');
  const names = c.flags.map((f) => f.name);
  const meant = long ? closest(name, names) : undefined;
  const elsewhere = COMMANDS.filter((o) => o !== c && o.flags.some((f) => (long ? f.name === name : f.short === name)));
  let fix: string;
  if (meant) fix = `Did you mean --${meant}? See rbp ${c.name} --help.`;
  else if (long && PACK_FLAGS[name]) fix = PACK_FLAGS[name]!;
  else if (elsewhere.length) {
    const f = elsewhere[0]!.flags.find((x) => (long ? x.name === name : x.short === name))!;
    fix = `${raw}${long ? '' : ` (--${f.name})`} is a flag of rbp ${elsewhere.map((o) => o.name).join(' and rbp ')}, not of rbp ${c.name}. See rbp ${c.name} --help.`;
  } else fix = `See rbp ${c.name} --help for its flags.`;
  return flagError('platform/flag/unknown', `Unknown flag ${raw} for rbp ${c.name}`, raw, `rbp ${c.name} takes ${flagNames(c)}.`, fix);
}

const label = (f: Flag, raw: string) => (raw === `--${f.name}` ? raw : `${raw} (--${f.name})`);

/** The flags and positional arguments of `args` for command `c`. */
export function parseFlags(c: Command, args: string[]): { values: FlagValues; positionals: string[] } {
  // No flag at all (`rbp detect APP`, as a platform runs it on every build): every argument is a
  // positional, as parseArgs would say, without loading it (~1 ms of a detect's start).
  if (!args.some((a) => a.startsWith('-') && a !== '-')) return { values: {}, positionals: [...args] };
  const { tokens } = parseArgs({ args, options: parseOptions(c), allowPositionals: true, strict: false, tokens: true });
  const values: FlagValues = {};
  const positionals: string[] = [];
  for (const t of tokens) {
    if (t.kind === 'positional') {
      positionals.push(t.value);
      continue;
    }
    if (t.kind !== 'option') continue;
    const flag = c.flags.find((f) => f.name === t.name);
    if (!flag) throw unknownFlag(c, t.rawName);
    const shown = label(flag, t.rawName);
    if (!flag.arg) {
      if (t.value !== undefined) {
        throw flagError(
          'platform/flag/unexpected-value',
          `${shown} takes no value`,
          `${t.rawName}=${t.value}`,
          `${shown} is a switch: present means on.`,
          `Write ${t.rawName} alone, or leave it out.`,
        );
      }
      values[flag.name] = true;
      continue;
    }
    // A value that looks like a flag is one: `--out --json` forgot OUT (as Node.js's strict mode says).
    if (t.value === undefined || (!t.inlineValue && /^-./.test(t.value))) {
      const next = t.value !== undefined ? ` (${JSON.stringify(t.value)} is a flag)` : '';
      throw flagError(
        'platform/flag/missing-value',
        `${shown} needs a value${next}`,
        t.rawName,
        `${shown} is followed by ${flag.arg}.`,
        `Write ${t.rawName} ${flag.arg}${t.value !== undefined ? `; a value that starts with - is written --${flag.name}=${t.value}` : ''}.`,
      );
    }
    if (flag.multiple) values[flag.name] = [...((values[flag.name] as string[] | undefined) ?? []), t.value];
    else if (values[flag.name] !== undefined && values[flag.name] !== t.value) {
      throw flagError(
        'platform/flag/repeated',
        `${shown} given twice`,
        `${t.rawName} ${t.value}`,
        `rbp ${c.name} takes one ${shown} (first ${JSON.stringify(values[flag.name])}).`,
        `Keep the one you mean.`,
      );
    } else values[flag.name] = t.value;
  }
  return { values, positionals };
}

/** `rbp <word>` where word is no command: the error, with the command it most likely meant. */
export function unknownCommand(word: string): UserError {
  const names = COMMANDS.map((c) => c.name);
  const meant = closest(word, names);
  return new UserError({
    id: 'platform/command/unknown',
    title: `Unknown command ${JSON.stringify(word)}`,
    seen: { what: 'command', value: word },
    rule: `rbp's commands are ${names.join(', ')}.`,
    fix: meant ? `Did you mean rbp ${meant}? See rbp --help.` : 'See rbp --help.',
  });
}
