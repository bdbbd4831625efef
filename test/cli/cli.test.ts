import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectEnv, parseEnvFile } from '../../lib/platform/cli-env.ts';
import { INSTANCE_SIZES, parseInstance, parseMemory, instanceMemory } from '../../lib/launch/instance.ts';
import { UserError } from '../../lib/errors.ts';
import { rbp, tmpDir } from '../helpers/rbp.ts';
import { renderedUserError as userErrorOf } from '../helpers/user-error.ts';

describe('--env and --env-file', () => {
  it('reads dotenv lines: comments, export, quotes; later flags win', () => {
    const dir = tmpDir();
    const f = path.join(dir, 'app.env');
    fs.writeFileSync(f, '# comment\nexport A=1\nB="two words"\nC=\'x=y\'\n\nD=a=b\n');
    expect(parseEnvFile(f)).toEqual({ A: '1', B: 'two words', C: 'x=y', D: 'a=b' });
    expect(collectEnv([f], ['A=override', 'E='])).toEqual({ A: 'override', B: 'two words', C: 'x=y', D: 'a=b', E: '' });
  });

  it('rejects a bad name with the file and line, without echoing the value', () => {
    const dir = tmpDir();
    const f = path.join(dir, 'bad.env');
    fs.writeFileSync(f, 'OK=1\n1BAD=secret-value\n');
    const msg = userErrorOf(() => parseEnvFile(f));
    expect(msg).toContain(`${f}:2`);
    expect(msg).not.toContain('secret-value');
    expect(msg.replace(f, '<file>')).toMatchInlineSnapshot(`
      "! ERROR Invalid environment variable
      !
      ! Seen: --env-file: "1BAD" (<file>:2)
      ! Rule: A variable is written NAME=value, NAME made of letters, digits and _ and not starting with a digit.
      ! Fix:  Write it like --env CC_WEBROOT=/public.
      ! (error id: platform/env/invalid)"
    `);
  });
});

describe('instance sizes and memory', () => {
  it('knows the nine sizes with their memory', () => {
    expect(Object.fromEntries(Object.entries(INSTANCE_SIZES).map(([k, v]) => [k, v / 2 ** 20]))).toEqual({
      pico: 256, nano: 512, XS: 1024, S: 2048, M: 4096, L: 8192, XL: 16384, '2XL': 24576, '3XL': 32768,
    });
    expect(parseInstance('xs')).toBe('XS');
    expect(parseInstance('2xl')).toBe('2XL');
  });

  it('refuses an unknown size, listing the valid ones', () => {
    expect(userErrorOf(() => parseInstance('huge'))).toMatchInlineSnapshot(`
      "! ERROR Unknown instance size
      !
      ! Seen: --instance: "huge"
      ! Rule: The instance size is one of pico, nano, XS, S, M, L, XL, 2XL, 3XL.
      ! Fix:  Use one of those sizes, for example --instance XS.
      ! (error id: platform/instance/unknown)"
    `);
  });

  it('parses memory sizes in binary units', () => {
    expect(parseMemory('512M')).toBe(512 * 2 ** 20);
    expect(parseMemory('1.5G')).toBe(1.5 * 2 ** 30);
    expect(parseMemory('2GiB')).toBe(2 * 2 ** 30);
    expect(() => parseMemory('lots')).toThrow(UserError);
    expect(() => parseMemory('1K')).toThrow(UserError);
  });

  it('takes RBP_INSTANCE_MEMORY before the cgroup limit', () => {
    expect(instanceMemory({ RBP_INSTANCE_MEMORY: '1073741824' })).toBe(2 ** 30);
  });
});

describe('rbp command line', () => {
  it('prints usage and exits 2 with no command', async () => {
    const r = await rbp([]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toContain('rbp detect APP');
    expect(r.stdout).toContain('node, static, phpserver');
  });

  it('refuses an unknown command, an unknown flag and a missing --out with exit 2', async () => {
    const unknown = await rbp(['frobnicate']);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stdout).toContain('! ERROR unknown command "frobnicate"');
    const flag = await rbp(['detect', '.', '--nope']);
    expect(flag.exitCode).toBe(2);
    expect(flag.stdout).toContain("Unknown option '--nope'");
    const out = await rbp(['build', '.']);
    expect(out.exitCode).toBe(2);
    expect(out.stdout).toContain('rbp build needs --out OUT');
    expect(out.stdout).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('refuses an unknown --type and a bad --port as one error block', async () => {
    const t = await rbp(['detect', '.', '--type', 'ruby']);
    expect(t.exitCode).toBe(2);
    expect(t.stdout).toContain('! Seen: --type: "ruby"');
    expect(t.stdout).toContain('--type is one of node, static, phpserver.');
    const p = await rbp(['run', tmpDir(), '--port', '70000']);
    expect(p.exitCode).toBe(2);
    expect(p.stdout).toContain('! Seen: --port: "70000"');
  });

  it('refuses a --timeout that is not a positive number, instead of waiting forever', async () => {
    const r = await rbp(['deploy', tmpDir(), '--timeout', 'abc']);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toContain('! Seen: --timeout: "abc"');
    expect(r.stdout).toContain('! Rule: The timeout is a number of seconds greater than 0.');
  });

  it('says how to build when rbp run is given a directory with no build', async () => {
    const r = await rbp(['run', tmpDir()]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toContain('! ERROR Nothing built there');
    expect(r.stdout).toContain('Build first: rbp build APP --out');
  });

  it('turns off colour with NO_COLOR', async () => {
    const r = await rbp(['detect', '/nonexistent-app-dir'], { env: { NO_COLOR: '1', FORCE_COLOR: '1' } });
    expect(r.stdout).not.toContain('\u001b[');
  });
});
