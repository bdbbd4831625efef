import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { processArgs, profileScripts, shellArgv } from './launcher.ts';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-launcher-'));

describe('user arguments, by Buildpack API (lifecycle launch/process.go)', () => {
  const one = { command: ['echo'], args: ['default'] };
  const fixed = { command: ['printf', '%s|'], args: ['default'] };
  it.each([
    ['0.7', one, ['u'], ['default', 'u']],
    ['0.8', one, ['u'], ['default', 'u']],
    ['0.9', one, ['u'], ['u']],
    ['0.10', one, ['u'], ['u']],
    ['0.8', one, [], ['default']],
    ['0.8', fixed, ['u'], ['u']],
    ['0.10', fixed, [], ['default']],
  ])('API %s: %j with %j', (api, proc, user, want) => {
    expect(processArgs(proc, user, api)).toEqual(want);
  });
});

describe('shell processes (Buildpack API < 0.9, direct = false)', () => {
  const run = (argv: string[], cwd: string, env: Record<string, string> = {}) =>
    spawnSync(argv[0]!, argv.slice(1), { cwd, env: { PATH: process.env.PATH!, ...env }, encoding: 'utf8' });

  it('sources the profiles in order, moves to the working folder, runs the command as a script', () => {
    const app = tmp();
    fs.mkdirSync(path.join(app, 'sub'));
    fs.writeFileSync(path.join(app, '.profile'), 'export B="$A and .profile"\n');
    const layer = tmp();
    fs.mkdirSync(path.join(layer, 'profile.d', 'web'), { recursive: true });
    fs.writeFileSync(path.join(layer, 'profile.d', '1.sh'), 'export A=layer\n');
    fs.writeFileSync(path.join(layer, 'profile.d', 'web', '2.sh'), 'export A="$A web"\n');
    const profiles = profileScripts([layer], 'web', app);
    expect(profiles).toEqual([path.join(layer, 'profile.d', '1.sh'), path.join(layer, 'profile.d', 'web', '2.sh'), '.profile']);
    const r = run(shellArgv({ profiles, workingDir: path.join(app, 'sub'), command: 'echo "$B"; pwd', args: [], caller: 'rbp' }), app);
    expect(r.stdout).toBe(`layer web and .profile\n${fs.realpathSync(app)}/sub\n`);
  });

  it('with arguments, the command and each argument are one word each, evaluated', () => {
    const app = tmp();
    const r = run(shellArgv({ profiles: [], workingDir: app, command: 'printf', args: ['<%s>', '$X', 'two words'], caller: 'rbp' }), app, { X: 'x value' });
    expect(r.stdout).toBe('<x value><two words>');
  });
});
