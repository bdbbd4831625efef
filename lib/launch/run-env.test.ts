import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { SH_READ_HELPERS } from '../config/shell.ts';
import { applyRunEnv, runEnvLines, type RunEnvRule } from './run-env.ts';
import { NODE_OPTIONS_RULE } from '../../buildpacks/node/src/launch-plan.ts';

const MiB = 1024 * 1024;
const rules: RunEnvRule[] = [
  { kind: 'default', name: 'HOST', fallback: '0.0.0.0' },
  { kind: 'prepend', name: 'PATH', dirs: ['/app dir/node_modules/.bin', "/it's/bin"], fallback: '/usr/local/bin:/usr/bin:/bin' },
  NODE_OPTIONS_RULE,
];
const NAMES = ['HOST', 'PATH', 'NODE_OPTIONS'];

/** The rules carried out by dash in `env` with the memory `mem`: each variable's value, or undefined when unset. */
function inSh(env: Record<string, string>, mem: number | undefined): Record<string, string | undefined> {
  const script = [
    ...SH_READ_HELPERS,
    `mem=${mem ?? ''}`,
    ...runEnvLines(rules),
    ...NAMES.map((n) => `if [ -n "\${${n}+x}" ]; then printf '%s=%s\\0' ${n} "$${n}"; fi`),
  ].join('\n');
  // /bin/sh is dash on Debian: the POSIX sh the launch scripts run on. `env -i` leaves PATH unset.
  const r = spawnSync('env', ['-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), '/bin/sh', '-c', script], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  const out: Record<string, string | undefined> = Object.fromEntries(NAMES.map((n) => [n, undefined]));
  for (const pair of r.stdout.split('\0').filter(Boolean)) out[pair.slice(0, pair.indexOf('='))] = pair.slice(pair.indexOf('=') + 1);
  return out;
}

/** What the Node.js launcher sets: the rules' values, and the run environment's own for the rest. */
function inJs(env: Record<string, string>, mem: number | undefined): Record<string, string | undefined> {
  const applied = applyRunEnv(rules, env, mem);
  return Object.fromEntries(NAMES.map((n) => [n, applied[n] ?? env[n]]));
}

describe('run-time rules: the Node.js launcher and the launch script derive the same variables', () => {
  // PATH is always in a launch's environment; a shell started without one makes up its own (dash:
  // /usr/local/sbin:...), so the cases give one (see the last test).
  const P = { PATH: '/usr/bin:/bin' };
  const cases: [string, Record<string, string>, number | undefined][] = [
    ['nothing else set, no memory', P, undefined],
    ['nothing else set, 1 GiB', P, 1024 * MiB],
    ['HOST empty stays empty; PATH set', { HOST: '', PATH: '/opt/bin:/bin' }, 512 * MiB],
    ['HOST set; NODE_OPTIONS with other flags', { ...P, HOST: '127.0.0.1', NODE_OPTIONS: '  --require /app/.pnp.cjs ' }, 2048 * MiB],
    ['NODE_OPTIONS already has the flag (underscores)', { ...P, NODE_OPTIONS: '--max_old_space_size=100' }, 4096 * MiB],
    ['NODE_OPTIONS with spaces only, no memory', { ...P, NODE_OPTIONS: '   ' }, undefined],
    ['NODE_OPTIONS with spaces only, memory', { ...P, NODE_OPTIONS: '   ' }, 300 * MiB + 12345],
  ];
  for (const [name, env, mem] of cases) {
    it(name, () => {
      expect(inSh(env, mem)).toEqual(inJs(env, mem));
    });
  }

  it('the values are the contract’s (node rules 1 and 2)', () => {
    expect(inSh(P, 1024 * MiB)).toEqual({
      HOST: '0.0.0.0',
      PATH: "/app dir/node_modules/.bin:/it's/bin:/usr/bin:/bin",
      NODE_OPTIONS: '--max-old-space-size=768',
    });
    expect(inJs({}, undefined).PATH).toBe("/app dir/node_modules/.bin:/it's/bin:/usr/local/bin:/usr/bin:/bin");
    // Without a PATH the shell's own comes after the app's folders.
    expect(inSh({}, undefined).PATH).toMatch(/^\/app dir\/node_modules\/\.bin:\/it's\/bin:\/.*\/usr\/bin/);
  });
});
