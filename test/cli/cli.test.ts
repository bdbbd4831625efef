import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../lib/platform/cli.ts';
import { collectEnv, parseEnvFile } from '../../lib/platform/cli-env.ts';
import { INSTANCE_SIZES, parseInstance, parseMemory, instanceMemory } from '../../lib/launch/instance.ts';
import { UserError } from '../../lib/errors.ts';
import { FIXTURES, rbp, tmpDir } from '../helpers/rbp.ts';
import { renderedUserError as userErrorOf } from '../helpers/user-error.ts';

describe('--env and --env-file', () => {
  it('reads dotenv lines: comments, export, quotes, inline comments, multi-line values; later flags win', () => {
    const dir = tmpDir();
    const f = path.join(dir, 'app.env');
    fs.writeFileSync(
      f,
      '# comment\nexport A=1\nB="two words"\nC=\'x=y\'\n\nD=a=b # a comment\nKEY="-----BEGIN KEY-----\nabc\n-----END KEY-----"\nE="esc\\nline"\n',
    );
    expect(parseEnvFile(f)).toEqual({ A: '1', B: 'two words', C: 'x=y', D: 'a=b', KEY: '-----BEGIN KEY-----\nabc\n-----END KEY-----', E: 'esc\nline' });
    expect(collectEnv([f], ['A=override', 'F='])).toMatchObject({ A: 'override', B: 'two words', F: '' });
    // project.toml's env (the base) loses to files and flags.
    expect(collectEnv([f], ['A=flag'], { A: 'project', P: 'project' })).toMatchObject({ A: 'flag', P: 'project' });
  });

  it("a name alone on a line takes its value from rbp's environment, as pack reads an env file; an unset one is a line error that shows nothing", () => {
    const dir = tmpDir();
    const f = path.join(dir, 'bare.env');
    fs.writeFileSync(f, 'A=1\nFROM_HOST\nexport ALSO_HOST # comment\nKEY="multi\nNOT_A_NAME\nend"\n');
    expect(parseEnvFile(f, { FROM_HOST: 'h', ALSO_HOST: 'x', NOT_A_NAME: 'never' })).toEqual({
      A: '1',
      FROM_HOST: 'h',
      ALSO_HOST: 'x',
      KEY: 'multi\nNOT_A_NAME\nend',
    });
    const msg = userErrorOf(() => parseEnvFile(f, { FROM_HOST: 'h' }));
    expect(msg).toContain(`${f}:3`);
    expect(msg).toContain("A name alone takes its value from rbp's environment, where it must be set.");
    expect(msg).not.toContain('ALSO_HOST');
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
    fs.writeFileSync(
      f,
      'OK=1\nPRIVATE_KEY=-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n',
    );
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
      pico: 256,
      nano: 512,
      XS: 1024,
      S: 2048,
      M: 4096,
      L: 8192,
      XL: 16384,
      '2XL': 24576,
      '3XL': 32768,
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
    expect(unknown.stderr).toContain('! ERROR Unknown command "frobnicate"');
    expect(unknown.stdout).toBe('');
    const flag = await rbp(['detect', '.', '--nope']);
    expect(flag.exitCode).toBe(2);
    expect(flag.stderr).toContain('! ERROR Unknown flag --nope for rbp detect');
    expect(flag.stderr).toContain('See rbp detect --help for its flags.');
    const out = await rbp(['build', '.']);
    expect(out.exitCode).toBe(2);
    expect(out.stderr).toContain('rbp build needs --out OUT');
    expect(out.all).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('says what a mistyped command, flag or --type most likely meant', async () => {
    // In-process: each fails before any work.
    const said = async (argv: string[]) => {
      let err = '';
      const sink = (f: (s: string) => void) =>
        new Writable({
          write: (c, _e, cb) => {
            f(String(c));
            cb();
          },
        });
      expect(await main(argv, { stdout: sink(() => undefined), stderr: sink((t) => (err += t)) }), err).toBe(2);
      return /! Fix: {2}(.*)/.exec(err.replace(/\u001b\[[0-9;]*m/g, ''))![1];
    };
    expect(await said(['biuld', '.'])).toBe('Did you mean rbp build? See rbp --help.');
    expect(await said(['deploy', '.', '--chek'])).toBe('Did you mean --check? See rbp deploy --help.');
    expect(await said(['build', '.', '--out', 'x', '--tpye', 'node'])).toBe('Did you mean --type? See rbp build --help.');
    expect(await said(['detect', '.', '--type', 'nodejs'])).toBe('Did you mean --type node?');
    expect(await said(['detect', '.', '--type', 'php'])).toBe('Did you mean --type phpserver?');
    expect(await said(['run', '.', '--check'])).toBe('--check is a flag of rbp deploy, not of rbp run. See rbp run --help.');
    expect(await said(['build', '--path', '.'])).toBe('rbp takes the application folder as its argument: rbp build APP --out OUT.');
    expect(await said(['build', '.', '--out'])).toBe('Write --out OUT.');
    expect(await said(['build', '.', '--out', '--json'])).toBe('Write --out OUT; a value that starts with - is written --out=--json.');
    expect(await said(['deploy', '.', '--check=yes'])).toBe('Write --check alone, or leave it out.');
    expect(await said(['build', '.', '--out', 'a', '-o', 'b'])).toBe('Keep the one you mean.');
    expect(await said(['detect', '.', '--nope'])).toBe('See rbp detect --help for its flags.');
  });

  it('takes the forms pack users type: -b id@version, -t/--tag with --image', async () => {
    const ok = await rbp(['detect', path.join(FIXTURES, 'node-hello'), '-b', 'rbp/node@0.1.0', '--json']);
    expect(ok.exitCode, ok.all).toBe(0);
    expect(JSON.parse(ok.stdout).group).toEqual([{ id: 'rbp/node', version: '0.1.0' }]);
    const urn = await rbp(['detect', path.join(FIXTURES, 'node-hello'), '-b', 'urn:cnb:builder:rbp/node', '--json']);
    expect(JSON.parse(urn.stdout).group).toEqual([{ id: 'rbp/node', version: '0.1.0' }]);
    const other = await rbp(['detect', path.join(FIXTURES, 'node-hello'), '-b', 'rbp/node@9.9.9']);
    expect(other.stderr).toContain('Use rbp/node@0.1.0 (this rbp has that version), or leave the version out.');
    // -t is --tag, as in pack; a runtime name after it says how to write --type.
    const tag = await rbp(['build', path.join(FIXTURES, 'node-hello'), '--out', path.join(tmpDir(), 'out'), '-t', 'node']);
    expect(tag.exitCode).toBe(2);
    expect(tag.stderr).toContain('For the runtime, write --type node (-t is --tag, as in pack). For an image, add --image DIR.');
    const bad = await rbp([
      'build',
      path.join(FIXTURES, 'node-hello'),
      '--out',
      path.join(tmpDir(), 'out'),
      '--image',
      path.join(tmpDir(), 'img'),
      '--tag',
      'my app',
    ]);
    expect(bad.stderr).toContain('(error id: platform/tag/invalid)');
  });

  it('under --json a failure is {"error": {id, message, fix}} on stdout, whatever failed', async () => {
    const usage = await rbp(['deploy', '.', '--json', '--bogus']);
    expect(usage.exitCode).toBe(2);
    expect(JSON.parse(usage.stdout)).toMatchObject({
      exitCode: 2,
      error: { id: 'platform/flag/unknown', message: 'Unknown flag --bogus for rbp deploy', fix: expect.any(String) },
    });
    const env = await rbp(['deploy', tmpDir(), '--json', '--env-file', path.join(tmpDir(), 'missing.env')]);
    expect(JSON.parse(env.stdout).error).toMatchObject({ id: 'platform/env-file/not-found', message: 'Environment file not found', fix: 'Check the path.' });
    // A build that fails in a buildpack: the buildpack's own error id, read from its output.
    const app = tmpDir();
    fs.writeFileSync(path.join(app, 'package.json'), '{"scripts":{"start":"node x.js"},"engines":{"node":"not a range"}}');
    const built = await rbp(['build', app, '--out', path.join(tmpDir(), 'out'), '--json']);
    expect(built.exitCode).toBe(51);
    expect(JSON.parse(built.stdout)).toMatchObject({
      exitCode: 51,
      error: { id: 'node/version/engines-invalid', message: 'engines.node in package.json is not a semver range' },
    });
    const none = await rbp(['build', tmpDir(), '--out', path.join(tmpDir(), 'out'), '--json']);
    expect(JSON.parse(none.stdout).error.id).toBe('platform/detect/no-group');
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
