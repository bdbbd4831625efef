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
    throw badName(what, name, undefined, name && sep ? `Write ${name}=… with "=" instead of "${sep}": --env ${name}=VALUE.` : 'Write it like --env CC_WEBROOT=/public.');
  }
  const name = s.slice(0, eq);
  if (!NAME_RE.test(name)) throw badName(what, name);
  return [name, s.slice(eq + 1)];
}

/** The line numbers (1-based) of lines dotenv took neither as `NAME=value` nor as part of a quoted value. */
function strayLines(text: string, values: string[]): number[] {
  const stray: number[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    if (/^(?:export\s+)?[\w.-]+\s*(?:=|:\s)/.test(line) || /^(?:export\s+)?[\w.-]+\s*:$/.test(line)) return;
    // A line of a multi-line value (its last line ends with the closing quote, maybe a comment).
    const inner = line.replace(/["'`]\s*(?:#.*)?$/, '');
    if (inner && values.some((v) => v.includes(inner))) return;
    stray.push(i + 1);
  });
  return stray;
}

/** A dotenv file, parsed by dotenv. */
export function parseEnvFile(file: string): EnvMap {
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
  const stray = strayLines(text, Object.values(parsed));
  if (stray.length) {
    throw new UserError({
      id: 'platform/env-file/invalid-line',
      title: 'Line of an environment file is not NAME=value',
      seen: { what: '--env-file', where: `${file}:${stray.slice(0, 5).join(',')}${stray.length > 5 ? ',…' : ''}` },
      rule: `${RULE} A value spanning several lines is quoted ("...").`,
      fix: 'Fix those lines (their contents are not shown: they may hold a secret); quote a multi-line value like KEY="line 1\\nline 2" or across lines in double quotes.',
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
