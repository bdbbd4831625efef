/**
 * Secrets: the registry credentials never go through a `.npmrc` the app controls (a
 * symlink, dangling or to a file outside the app, or a hard link), and no error echoes a value
 * typed with `:` for `=` in `--env` or a line without `=` in `--env-file`.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TOKEN_VARIABLE, registryAuth, withRegistryAuth } from '../../buildpacks/node/src/registry-auth.ts';
import { memoryTempRoot } from '../../lib/memory-temp.ts';
import { RBP, rbp, tmpDir } from '../helpers/rbp.ts';
import { bpArgs, scriptedApp } from '../lifecycle/helpers.ts';

const TOKEN = 'npm_S3cretT0kenValue';

/**
 * Runs withRegistryAuth and returns what the install saw in `.npmrc`: the line that names the
 * variable, never the token, which only the install's environment holds.
 */
async function duringInstall(app: string): Promise<string> {
  let seen = '';
  await withRegistryAuth(app, registryAuth({ NPM_TOKEN: TOKEN }), async (env) => {
    const st = fs.lstatSync(path.join(app, '.npmrc'));
    expect(st.isSymbolicLink()).toBe(false);
    expect(st.mode & 0o777).toBe(0o600);
    seen = fs.readFileSync(path.join(app, '.npmrc'), 'utf8');
    expect(env[TOKEN_VARIABLE]).toBe(TOKEN);
  });
  expect(seen).not.toContain(TOKEN);
  return seen;
}

const TOKEN_LINE = '//registry.npmjs.org/:_authToken=${RBP_NPM_AUTH_TOKEN}';

describe('the registry token never goes through an app-controlled .npmrc', () => {
  it('a .npmrc symlink to a file outside the app: the outside file is untouched, the link comes back', async () => {
    const outside = path.join(tmpDir('rbp-outside-'), 'victim');
    fs.writeFileSync(outside, 'outside=1\n');
    const app = tmpDir('rbp-app-');
    fs.symlinkSync(outside, path.join(app, '.npmrc'));
    const seen = await duringInstall(app);
    expect(seen).toContain(TOKEN_LINE);
    // Lines of a file outside the app are not read into the build either.
    expect(seen).not.toContain('outside=1');
    expect(fs.readFileSync(outside, 'utf8')).toBe('outside=1\n');
    expect(fs.readlinkSync(path.join(app, '.npmrc'))).toBe(outside);
  });

  it('a dangling .npmrc symlink: its target is never created', async () => {
    const target = path.join(tmpDir('rbp-outside-'), 'planted');
    const app = tmpDir('rbp-app-');
    fs.symlinkSync(target, path.join(app, '.npmrc'));
    await duringInstall(app);
    expect(fs.existsSync(target)).toBe(false);
    expect(fs.readlinkSync(path.join(app, '.npmrc'))).toBe(target);
  });

  it('a .npmrc hard-linked to a file outside the app: that file never holds the token', async () => {
    const dir = tmpDir('rbp-hl-');
    const outside = path.join(dir, 'shared-npmrc');
    fs.writeFileSync(outside, 'save-exact=true\n');
    const app = path.join(dir, 'app');
    fs.mkdirSync(app);
    fs.linkSync(outside, path.join(app, '.npmrc'));
    const seen = await duringInstall(app);
    expect(seen).toBe(`save-exact=true\n${TOKEN_LINE}\n`);
    expect(fs.readFileSync(outside, 'utf8')).toBe('save-exact=true\n');
    expect(fs.statSync(path.join(app, '.npmrc')).ino).toBe(fs.statSync(outside).ino);
  });

  it('a .npmrc symlink to a file inside the app: its lines are kept, the file is untouched', async () => {
    const app = tmpDir('rbp-app-');
    fs.writeFileSync(path.join(app, 'npmrc.base'), 'save-exact=true\n');
    fs.symlinkSync('npmrc.base', path.join(app, '.npmrc'));
    const seen = await duringInstall(app);
    expect(seen).toBe(`save-exact=true\n${TOKEN_LINE}\n`);
    expect(fs.readFileSync(path.join(app, 'npmrc.base'), 'utf8')).toBe('save-exact=true\n');
  });
});

describe('no error echoes a secret value', () => {
  it('--env NPM_TOKEN:value (a : typed for =)', async () => {
    const r = await rbp(['detect', tmpDir(), '--env', `NPM_TOKEN:${TOKEN}`]);
    expect(r.exitCode).toBe(2);
    expect(r.all).toContain('platform/env/invalid');
    expect(r.all).toContain('NPM_TOKEN');
    expect(r.all).not.toContain(TOKEN);
    expect(r.all).not.toContain('S3cret');
  });

  it('an --env-file line without =', async () => {
    const file = path.join(tmpDir(), 'app.env');
    fs.writeFileSync(file, `CC_WEBROOT=/public\nNPM_TOKEN ${TOKEN}\n`);
    const r = await rbp(['detect', tmpDir(), '--env-file', file]);
    expect(r.exitCode).toBe(2);
    expect(r.all).toContain(`${file}:2`);
    expect(r.all).not.toContain('S3cret');
  });
});

describe('temp folders holding secrets go on every exit path', () => {
  it('rbp detect stopped by SIGTERM removes its platform folder (NPM_TOKEN inside)', async () => {
    const marks = tmpDir('rbp-marks-');
    const app = scriptedApp({ 'a/detect': `ls "$1/env" > ${marks}/env-files; touch ${marks}/started; sleep 30` });
    const child = spawn('node', [RBP, 'detect', app, ...bpArgs('a'), '--env', `NPM_TOKEN=${TOKEN}`], { stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const t0 = Date.now();
    while (!fs.existsSync(path.join(marks, 'started'))) {
      if (Date.now() - t0 > 30_000) throw new Error('detect did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(fs.readFileSync(path.join(marks, 'env-files'), 'utf8')).toContain('NPM_TOKEN');
    const temps = () => fs.readdirSync(memoryTempRoot().dir).filter((n) => n.startsWith(`rbp-platform-${child.pid}-`));
    expect(temps()).toHaveLength(1);
    child.kill('SIGTERM');
    expect(await exited).toBe(143);
    expect(temps()).toEqual([]);
  });
});

describe('files that must hold a secret are on a memory-backed file system', () => {
  it('this machine has one (CI runs on such a machine: a failure here means the check is wrong)', () => {
    expect(memoryTempRoot()).toMatchObject({ memory: true });
  });

  it("the platform's env files (NPM_TOKEN among them) are on it while the buildpacks run, and gone after", async () => {
    const marks = tmpDir('rbp-marks-');
    const app = scriptedApp({ 'a/detect': `stat -f -c %T "$1/env/NPM_TOKEN" > ${marks}/fs; echo "$1" > ${marks}/platform` });
    const r = await rbp(['detect', app, ...bpArgs('a'), '--env', `NPM_TOKEN=${TOKEN}`]);
    expect(r.exitCode, r.all).toBe(0);
    expect(fs.readFileSync(path.join(marks, 'fs'), 'utf8').trim()).toBe('tmpfs');
    const platform = fs.readFileSync(path.join(marks, 'platform'), 'utf8').trim();
    expect(platform.startsWith(`${memoryTempRoot().dir}/rbp-platform-`)).toBe(true);
    expect(fs.existsSync(platform)).toBe(false);
  });
});
