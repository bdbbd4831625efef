/** `--env K=V` and `--env-file F`: the user's variables, as the platform would set them. */
import fs from 'node:fs';
import type { EnvMap } from '../cnb/env.ts';
import { UserError } from '../errors.ts';

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

function badName(what: string, value: string, where?: string): UserError {
  return new UserError({
    id: 'platform/env/invalid',
    title: 'Invalid environment variable',
    seen: { what, value, ...(where ? { where } : {}) },
    rule: 'A variable is written NAME=value, NAME made of letters, digits and _ and not starting with a digit.',
    fix: 'Write it like --env CC_WEBROOT=/public.',
  });
}

function shownWithoutValue(s: string): string {
  const head = /^[A-Za-z0-9_]*/.exec(s)![0].slice(0, 64);
  return head.length === s.length ? head : `${head}… (the rest is hidden: it may be a secret)`;
}

export function parseEnvAssignment(s: string, what = '--env', where?: string): [string, string] {
  const eq = s.indexOf('=');
  const name = eq === -1 ? s : s.slice(0, eq);
  // The value is not echoed back: it may be a secret.
  // Without `=` (`NPM_TOKEN:secret`), only the leading name-like part is shown.
  if (eq === -1 || !NAME_RE.test(name)) throw badName(what, eq === -1 ? shownWithoutValue(s) : name, where);
  return [name, s.slice(eq + 1)];
}

/** A dotenv file: `NAME=value` lines, `#` comments, optional `export `, optional matching quotes. */
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
  const env: EnvMap = {};
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const [k, v] = parseEnvAssignment(line.replace(/^export\s+/, ''), '--env-file', `${file}:${i + 1}`);
    const q = /^(["'])([\s\S]*)\1$/.exec(v);
    env[k] = q ? (q[1] === '"' ? q[2]!.replace(/\\n/g, '\n') : q[2]!) : v;
  });
  return env;
}

/** Files first, then `--env` flags, later ones winning. */
export function collectEnv(files: string[] = [], pairs: string[] = []): EnvMap {
  const env: EnvMap = {};
  for (const f of files) Object.assign(env, parseEnvFile(f));
  for (const p of pairs) {
    const [k, v] = parseEnvAssignment(p);
    env[k] = v;
  }
  return env;
}
