/**
 * `--env NAME=VALUE` and `--env-file FILE`: the user's variables, as the platform would set them.
 * Files are parsed by dotenv (quotes, multi-line values, inline comments, `export `). Errors name the
 * flag, the file and the line number and at most the variable's name: never a value or a line of the
 * file, which may be a secret.
 */
import fs from 'node:fs';
import dotenv from 'dotenv';
import type { EnvMap } from '../cnb/env.ts';
import { UserError } from '../errors.ts';

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const RULE = 'A variable is written NAME=value, NAME made of letters, digits and _ and not starting with a digit.';

function badName(what: string, value: string | undefined, where?: string, fix = 'Write it like --env CC_WEBROOT=/public.'): UserError {
  return new UserError({
    id: 'platform/env/invalid',
    title: 'Invalid environment variable',
    seen: { what, ...(value !== undefined ? { value } : {}), ...(where ? { where } : {}) },
    rule: RULE,
    fix,
  });
}

/**
 * One `--env` argument. `NAME` alone takes the value from rbp's own environment (as pack does);
 * `NAME:value` (a colon typed for `=`) is refused naming NAME only.
 */
export function parseEnvAssignment(s: string, what = '--env', host: NodeJS.ProcessEnv = process.env): [string, string] {
  const eq = s.indexOf('=');
  if (eq === -1) {
    if (NAME_RE.test(s)) {
      const v = host[s];
      if (v === undefined) {
        throw new UserError({
          id: 'platform/env/unset',
          title: `${s} is not set`,
          seen: { what, value: s },
          rule: `--env NAME without =value takes NAME's value from rbp's own environment, where ${s} is not set.`,
          fix: `Write --env ${s}=value, or export ${s} before running rbp.`,
        });
      }
      return [s, v];
    }
    // Up to the first separator-like character only: what follows is the value.
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(s)?.[0];
    const sep = name !== undefined ? s[name.length] : undefined;
    throw badName(
      what,
      name,
      undefined,
      name && sep ? `Write ${name}=… with "=" instead of "${sep}": --env ${name}=VALUE.` : 'Write it like --env CC_WEBROOT=/public.',
    );
  }
  const name = s.slice(0, eq);
  if (!NAME_RE.test(name)) throw badName(what, name);
  return [name, s.slice(eq + 1)];
}

/** `NAME` alone on a line (or `export NAME`): its value comes from rbp's environment, as pack reads it. */
const BARE_NAME = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?:#.*)?$/;

/** The indexes (0-based) of the lines inside a quoted value that spans several lines (after its first). */
function insideQuotes(lines: string[]): Set<number> {
  const inside = new Set<number>();
  let quote: string | undefined;
  lines.forEach((raw, i) => {
    if (quote) {
      inside.add(i);
      if (raw.includes(quote)) quote = undefined;
      return;
    }
    const open = /^\s*(?:export\s+)?[\w.-]+\s*=\s*(["'`])(.*)$/.exec(raw);
    if (open && !open[2]!.includes(open[1]!)) quote = open[1];
  });
  return inside;
}

/**
 * `stray`: 1-based numbers of the lines dotenv took neither as `NAME=value` nor as part of a quoted
 * value; `bare`: names alone on a line, set in rbp's environment, taken from there.
 */
function readLines(text: string, values: string[], host: NodeJS.ProcessEnv): { stray: number[]; bare: string[] } {
  const out = { stray: [] as number[], bare: [] as string[] };
  const lines = text.split(/\r?\n/);
  const quoted = insideQuotes(lines);
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    // A name alone, set in rbp's environment. One that is not set counts as a stray line: the line
    // is never shown (an unquoted secret's line can look like a name).
    const bare = quoted.has(i) ? undefined : BARE_NAME.exec(line)?.[1];
    if (bare !== undefined && host[bare] !== undefined) return void out.bare.push(bare);
    if (/^(?:export\s+)?[\w.-]+\s*(?:=|:\s)/.test(line) || /^(?:export\s+)?[\w.-]+\s*:$/.test(line)) return;
    // A line of a multi-line value (its last line ends with the closing quote, maybe a comment).
    const inner = line.replace(/["'`]\s*(?:#.*)?$/, '');
    if (inner && values.some((v) => v.includes(inner))) return;
    out.stray.push(i + 1);
  });
  return out;
}

/**
 * A dotenv file, parsed by dotenv; a line holding a name alone takes that variable from rbp's own
 * environment (`host`), as `--env NAME` does and as pack reads an env file.
 */
export function parseEnvFile(file: string, host: NodeJS.ProcessEnv = process.env): EnvMap {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new UserError({
      id: 'platform/env-file/not-found',
      title: 'Environment file not found',
      seen: { what: '--env-file', value: file },
      rule: '--env-file names a readable file of NAME=value lines.',
      fix: 'Check the path.',
    });
  }
  const parsed = dotenv.parse(text);
  const { stray, bare } = readLines(text, Object.values(parsed), host);
  if (stray.length) {
    throw new UserError({
      id: 'platform/env-file/invalid-line',
      title: 'Line of an environment file is not NAME=value',
      seen: { what: '--env-file', where: `${file}:${stray.slice(0, 5).join(',')}${stray.length > 5 ? ',…' : ''}` },
      rule: `${RULE} A value spanning several lines is quoted ("..."). A name alone takes its value from rbp's environment, where it must be set.`,
      fix: 'Fix those lines (their contents are not shown: they may hold a secret): export a name written alone, or write NAME=value; quote a multi-line value like KEY="line 1\\nline 2" or across lines in double quotes.',
    });
  }
  const env: EnvMap = {};
  for (const [k, v] of Object.entries(parsed)) {
    if (!NAME_RE.test(k)) {
      const n = text.split(/\r?\n/).findIndex((l) => new RegExp(`^\\s*(?:export\\s+)?${k.replace(/[.-]/g, '\\$&')}\\s*[=:]`).test(l));
      throw badName('--env-file', k, n >= 0 ? `${file}:${n + 1}` : file, 'Rename the variable with letters, digits and _ only, e.g. MY_VAR=value.');
    }
    env[k] = v;
  }
  for (const name of bare) if (!(name in parsed)) env[name] = host[name]!;
  return env;
}

/** Files first, then `--env` flags, later ones winning; `base` (project.toml's env) loses to both. */
export function collectEnv(files: string[] = [], pairs: string[] = [], base: EnvMap = {}): EnvMap {
  const env: EnvMap = { ...base };
  for (const f of files) Object.assign(env, parseEnvFile(f));
  for (const p of pairs) {
    const [k, v] = parseEnvAssignment(p);
    env[k] = v;
  }
  return env;
}
