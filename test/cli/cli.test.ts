import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectEnv, parseEnvFile } from '../../lib/platform/cli-env.ts';
import { INSTANCE_SIZES, parseInstance, parseMemory, instanceMemory } from '../../lib/launch/instance.ts';
import { UserError } from '../../lib/errors.ts';
import { rbp, tmpDir } from '../helpers/rbp.ts';
import { renderedUserError as userErrorOf } from '../helpers/user-error.ts';

describe('--env and --env-file', () => {
  it('reads dotenv lines: comments, export, quotes, inline comments, multi-line values; later flags win', () => {
    const dir = tmpDir();
    const f = path.join(dir, 'app.env');
    fs.writeFileSync(f, '# comment\nexport A=1\nB="two words"\nC=\'x=y\'\n\nD=a=b # a comment\nKEY="-----BEGIN KEY-----\nabc\n-----END KEY-----"\nE="esc\\nline"\n');
    expect(parseEnvFile(f)).toEqual({ A: '1', B: 'two words', C: 'x=y', D: 'a=b', KEY: '-----BEGIN KEY-----\nabc\n-----END KEY-----', E: 'esc\nline' });
    expect(collectEnv([f], ['A=override', 'F='])).toMatchObject({ A: 'override', B: 'two words', F: '' });
    // project.toml's env (the base) loses to files and flags.
    expect(collectEnv([f], ['A=flag'], { A: 'project', P: 'project' })).toMatchObject({ A: 'flag', P: 'project' });
  });

  it('rejects a bad name with the file and line, without echoing the value', () => {
    const dir = tmpDir();
    const f = path.join(dir, 'bad.env');
    fs.writeFileSync(f, 'OK=1\nMY-VAR=secret-value\n');
    const msg = userErrorOf(() => parseEnvFile(f));
    expect(msg).toContain(`${f}:2`);
    expect(msg).not.toContain('secret-value');
    expect(msg.replace(f, '<file>')).toMatchInlineSnapshot(`
      "! ERROR Invalid environment variable
      !
      ! Seen: --env-file: "MY-VAR" (<file>:2)
      ! Rule: A variable is written NAME=value, NAME made of letters, digits and _ and not starting with a digit.
      ! Fix:  Rename the variable with letters, digits and _ only, e.g. MY_VAR=value.
      ! (error id: platform/env/invalid)"
    `);
  });

  it('refuses an unquoted multi-line value by line number, never showing a line of the file', () => {
    const f = path.join(tmpDir(), 'key.env');
    fs.writeFileSync(f, 'OK=1\nPRIVATE_KEY=-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n');
    const msg = userErrorOf(() => parseEnvFile(f));
    expect(msg).toContain(`${f}:3,4`);
    expect(msg).toContain('platform/env-file/invalid-line');
    expect(msg).not.toMatch(/b3BlbnNz|BEGIN OPENSSH|END OPENSSH/);
  });

  it('--env NAME:value (a colon for =) is refused naming NAME only; --env NAME takes the value from the environment', () => {
    const msg = userErrorOf(() => collectEnv([], ['DB_PASSWORD:hunter2-secret']));
    expect(msg).toContain('Seen: --env: "DB_PASSWORD"');
    expect(msg).toContain('Write DB_PASSWORD=… with "=" instead of ":"');
    expect(msg).not.toContain('hunter2');
    const odd = userErrorOf(() => collectEnv([], ['9x:hunter2-secret']));
    expect(odd).not.toContain('hunter2');
    process.env.RBP_CLI_TEST_FROM_ENV = 'from-env';
    expect(collectEnv([], ['RBP_CLI_TEST_FROM_ENV'])).toEqual({ RBP_CLI_TEST_FROM_ENV: 'from-env' });
    delete process.env.RBP_CLI_TEST_FROM_ENV;
    expect(userErrorOf(() => collectEnv([], ['RBP_CLI_TEST_FROM_ENV']))).toContain('RBP_CLI_TEST_FROM_ENV is not set');
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
  it('prints the overview on stderr and exits 2 with no command', async () => {
    const r = await rbp([]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('rbp COMMAND [flags]');
    expect(r.stderr).toMatch(/^ {2}detect +Find the buildpack group/m);
  });

  it('refuses an unknown command, an unknown flag and a missing --out with exit 2', async () => {
    const unknown = await rbp(['frobnicate']);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain('! ERROR unknown command "frobnicate"');
    expect(unknown.stdout).toBe('');
    const flag = await rbp(['detect', '.', '--nope']);
    expect(flag.exitCode).toBe(2);
    expect(flag.stderr).toContain("Unknown option '--nope'");
    expect(flag.stderr).toContain('See rbp detect --help for every flag.');
    const out = await rbp(['build', '.']);
    expect(out.exitCode).toBe(2);
    expect(out.stderr).toContain('rbp build needs --out OUT');
    expect(out.all).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('refuses an unknown --type and a bad --port as one error block', async () => {
    const t = await rbp(['detect', '.', '--type', 'ruby']);
    expect(t.exitCode).toBe(2);
    expect(t.stderr).toContain('! Seen: --type: "ruby"');
    expect(t.stderr).toContain('--type is one of node, static, phpserver.');
    const p = await rbp(['run', tmpDir(), '--port', '70000']);
    expect(p.exitCode).toBe(2);
    expect(p.stderr).toContain('! Seen: --port: "70000"');
  });

  it('refuses a --timeout that is not a positive number, instead of waiting forever', async () => {
    const r = await rbp(['deploy', tmpDir(), '--timeout', 'abc']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('! Seen: --timeout: "abc"');
    expect(r.stderr).toContain('! Rule: The timeout is a number of seconds greater than 0.');
  });

  it('says how to build when rbp run is given a directory with no build', async () => {
    const r = await rbp(['run', tmpDir()]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('! ERROR Nothing built there');
    expect(r.stderr).toContain('Build first: rbp build APP --out');
  });

  it('turns off colour with NO_COLOR', async () => {
    const r = await rbp(['detect', '/nonexistent-app-dir'], { env: { NO_COLOR: '1', FORCE_COLOR: '1' } });
    expect(r.all).not.toContain('\u001b[');
  });
});
