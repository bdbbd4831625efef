/**
 * Private registry, for real (contract, node rule 9 and "Authentication" 1): a verdaccio started on
 * loopback with htpasswd auth and no uplinks serves `@private/greeting` to authenticated users only.
 * fixtures/node-private-registry depends on it and is built with NPM_TOKEN, then with
 * CC_NPM_BASIC_AUTH, each time with CC_NPM_REGISTRY=127.0.0.1:<port> (a loopback host: plain http),
 * and served. Without credentials the build fails with node/registry/refused. No secret (the token,
 * the password, user:password in Base64) is left in a log, the output or the cache, and the
 * project's own .npmrc is what it was.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryTempRoot } from '../../lib/memory-temp.ts';
import { FIXTURES, RBP, ROOT, freePort, rbp, tmpDir } from '../helpers/rbp.ts';
import { cacheFrom, envArgs, httpChecks, seedCache, serve } from './driver.ts';

const APP = path.join(FIXTURES, 'node-private-registry');
const USER = 'deployer';
const PASSWORD = 'pw-Verdacc10-s3cret';
const BASIC_B64 = Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
const GREETING = 'hello visitor from @private/greeting 1.0.0';

let work: string;
let seed: string;
let verdaccio: ChildProcess | undefined;
let verdaccioLog = '';
let port: number;
let token: string;

async function waitForRegistry(url: string, timeoutMs = 60_000): Promise<void> {
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    if (verdaccio?.exitCode !== null) throw new Error(`verdaccio exited:\n${verdaccioLog}`);
    try {
      await fetch(`${url}-/ping`);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`verdaccio did not answer within ${timeoutMs}ms:\n${verdaccioLog}`);
}

/** Starts verdaccio with a config of our own, creates the user, publishes @private/greeting. */
async function startRegistry(): Promise<void> {
  const dir = path.join(work, 'verdaccio');
  fs.mkdirSync(path.join(dir, 'storage'), { recursive: true });
  const config = path.join(dir, 'config.yaml');
  fs.writeFileSync(
    config,
    [
      `storage: ${path.join(dir, 'storage')}`,
      'auth:',
      '  htpasswd:',
      `    file: ${path.join(dir, 'htpasswd')}`,
      'uplinks: {}',
      'packages:',
      "  '@private/*':",
      '    access: $authenticated',
      '    publish: $authenticated',
      "  '**':",
      '    access: $authenticated',
      '    publish: $authenticated',
      'log: { type: stdout, format: pretty, level: warn }',
      '',
    ].join('\n'),
  );
  port = await freePort();
  verdaccio = spawn(path.join(ROOT, 'node_modules', '.bin', 'verdaccio'), ['--config', config, '--listen', `127.0.0.1:${port}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  verdaccio.stdout!.on('data', (d: Buffer | string) => (verdaccioLog += d.toString()));
  verdaccio.stderr!.on('data', (d: Buffer | string) => (verdaccioLog += d.toString()));
  const url = `http://127.0.0.1:${port}/`;
  await waitForRegistry(url);

  // `npm adduser` does this PUT: it creates the htpasswd user and answers with a token.
  const res = await fetch(`${url}-/user/org.couchdb.user:${USER}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: USER, password: PASSWORD }),
  });
  const body = (await res.json()) as { token?: string };
  if (res.status !== 201 || !body.token) throw new Error(`adduser: ${res.status} ${JSON.stringify(body)}`);
  token = body.token;

  const pkg = path.join(dir, 'greeting');
  fs.mkdirSync(pkg);
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: '@private/greeting', version: '1.0.0', main: 'index.js', license: 'MIT' }));
  fs.writeFileSync(path.join(pkg, 'index.js'), "module.exports = (name) => `hello ${name} from @private/greeting ${require('./package.json').version}`;\n");
  const npmrc = path.join(dir, 'publish.npmrc');
  fs.writeFileSync(npmrc, `//127.0.0.1:${port}/:_authToken=${token}\n`, { mode: 0o600 });
  await execa('npm', ['publish', '--registry', url, '--userconfig', npmrc, '--no-audit'], { cwd: pkg });
  // Only an authenticated request sees it.
  expect((await fetch(`${url}@private%2fgreeting`)).status).toBe(401);
  expect((await fetch(`${url}@private%2fgreeting`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
}

beforeAll(async () => {
  work = tmpDir('rbp-node-registry-');
  [seed] = await Promise.all([seedCache(work), startRegistry()]);
}, 300_000);

afterAll(async () => {
  if (verdaccio?.exitCode === null) {
    const gone = new Promise((r) => verdaccio!.once('exit', r));
    verdaccio.kill('SIGTERM');
    await gone;
  }
  await fs.promises.rm(work, { recursive: true, force: true });
}, 60_000);

/** Files under `dirs` that hold any of `secrets` (grep -r, binary files included). */
async function filesHolding(secrets: string[], dirs: string[]): Promise<string> {
  for (const d of dirs) expect(fs.readdirSync(d).length, d).toBeGreaterThan(0);
  const r = await execa('grep', ['-rlaF', ...secrets.flatMap((s) => ['-e', s]), ...dirs], { reject: false });
  // 0: found, 1: not found; anything else is grep failing, which must not pass for "not found".
  expect([0, 1], r.stderr).toContain(r.exitCode);
  return r.stdout;
}

describe('fixtures/node-private-registry: @private/greeting from a verdaccio that wants credentials', () => {
  const projectNpmrc = fs.readFileSync(path.join(APP, '.npmrc'), 'utf8');
  const cases: { name: string; env: () => Record<string, string>; secrets: () => string[] }[] = [
    { name: 'NPM_TOKEN', env: () => ({ NPM_TOKEN: token, CC_NPM_REGISTRY: `127.0.0.1:${port}` }), secrets: () => [token] },
    {
      name: 'CC_NPM_BASIC_AUTH',
      env: () => ({ CC_NPM_BASIC_AUTH: `${USER}:${PASSWORD}`, CC_NPM_REGISTRY: `127.0.0.1:${port}` }),
      secrets: () => [PASSWORD, BASIC_B64],
    },
  ];
  for (const c of cases) {
    it(`${c.name} + CC_NPM_REGISTRY: builds, serves the package's output, keeps no secret`, async () => {
      const dir = path.join(work, c.name);
      const out = path.join(dir, 'out');
      const cache = await cacheFrom(seed, path.join(dir, 'cache'));
      const r = await rbp(['build', APP, '--out', out, '--type', 'node', '--cache', cache, ...envArgs(c.env())]);
      expect(r.exitCode, r.all).toBe(0);
      expect(r.all).toContain('installing dependencies (no previous layer)');
      const ws = path.join(out, 'workspace');
      expect(fs.existsSync(path.join(ws, 'node_modules', '@private', 'greeting', 'index.js'))).toBe(true);
      // npm fetched it over plain http from the loopback registry.
      expect(fs.readFileSync(path.join(ws, 'package-lock.json'), 'utf8')).toContain(
        `"resolved": "http://127.0.0.1:${port}/@private/greeting/-/greeting-1.0.0.tgz"`,
      );

      for (const s of c.secrets()) expect(r.all).not.toContain(s);
      // The search does find a secret where there is one (the npmrc the test published with)...
      expect(await filesHolding([token], [path.join(work, 'verdaccio')])).toContain('publish.npmrc');
      // ...and finds none in what the build left.
      expect(await filesHolding(c.secrets(), [out, cache])).toBe('');
      expect(fs.readFileSync(path.join(ws, '.npmrc'), 'utf8')).toBe(projectNpmrc);
      expect(fs.readFileSync(path.join(APP, '.npmrc'), 'utf8')).toBe(projectNpmrc);

      const served = await serve(out, {}, (p) => httpChecks(p, [{ path: '/', status: 200, contains: GREETING }]));
      expect(served.signal, served.output).toBeNull();
      for (const s of c.secrets()) expect(served.output).not.toContain(s);
    });
  }

  // npm is the case above; the other managers that read an npmrc take the same lines. Each sees,
  // during its install, npmrc lines that name the variable and never hold the secret.
  for (const tool of ['pnpm', 'yarn', 'bun']) {
    it(`CC_NODE_BUILD_TOOL=${tool} + NPM_TOKEN: installs from the registry; the npmrc it read held no secret`, async () => {
      const dir = path.join(work, `tool-${tool}`);
      const app = path.join(dir, 'app');
      fs.cpSync(APP, app, { recursive: true });
      const pkg = JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
      pkg.scripts.postinstall = 'cat .npmrc > npmrc-during-install';
      fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify(pkg, null, 2));
      const out = path.join(dir, 'out');
      const cache = await cacheFrom(seed, path.join(dir, 'cache'));
      const r = await rbp([
        'build',
        app,
        '--out',
        out,
        '--type',
        'node',
        '--cache',
        cache,
        ...envArgs({ NPM_TOKEN: token, CC_NPM_REGISTRY: `127.0.0.1:${port}`, CC_NODE_BUILD_TOOL: tool }),
      ]);
      expect(r.exitCode, r.all).toBe(0);
      const ws = path.join(out, 'workspace');
      expect(fs.existsSync(path.join(ws, 'node_modules', '@private', 'greeting', 'index.js'))).toBe(true);
      const seen = fs.readFileSync(path.join(ws, 'npmrc-during-install'), 'utf8');
      // pnpm takes credentials from the build's user-level npmrc only (registry-auth.ts, CredentialsIn).
      const credentials = tool === 'pnpm' ? '' : `//127.0.0.1:${port}/:_authToken=\${RBP_NPM_AUTH_TOKEN}\n`;
      expect(seen).toBe(`${projectNpmrc}registry=http://127.0.0.1:${port}/\n${credentials}`);
      expect(r.all).not.toContain(token);
      expect(await filesHolding([token], [out, cache, app])).toBe('');
    });
  }

  it('a build killed with SIGKILL mid-install (rbp and the install, as a power cut ends them) leaves the token in no file on disk', async () => {
    const dir = path.join(work, 'killed');
    const app = path.join(dir, 'app');
    const marks = path.join(dir, 'marks');
    fs.mkdirSync(marks, { recursive: true });
    fs.cpSync(APP, app, { recursive: true });
    const pkg = JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    pkg.scripts.postinstall = `ps -o pgid= $$ > ${marks}/pgid.tmp && mv ${marks}/pgid.tmp ${marks}/pgid && sleep 120`;
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify(pkg, null, 2));
    const cache = await cacheFrom(seed, path.join(dir, 'cache'));
    const args = [
      'build',
      app,
      '--out',
      path.join(dir, 'out'),
      '--type',
      'node',
      '--cache',
      cache,
      ...envArgs({ NPM_TOKEN: token, CC_NPM_REGISTRY: `127.0.0.1:${port}` }),
    ];
    const child = spawn('node', ['--', RBP, ...args], { stdio: 'ignore', env: { ...process.env, NO_COLOR: '1' } });
    const exited = new Promise((r) => child.once('exit', r));
    const t0 = Date.now();
    while (!fs.existsSync(path.join(marks, 'pgid'))) {
      if (Date.now() - t0 > 120_000 || child.exitCode !== null) throw new Error('the install did not reach its postinstall script');
      await new Promise((r) => setTimeout(r, 100));
    }
    const installGroup = Number(fs.readFileSync(path.join(marks, 'pgid'), 'utf8').trim());
    // The one file that must hold it (the platform's env file) is in memory while the build runs.
    const inMemory = () => execa('grep', ['-rlaF', '-e', token, memoryTempRoot().dir], { reject: false }).then((r) => r.stdout);
    expect(await inMemory()).toContain(`/rbp-build-${child.pid}-`);
    child.kill('SIGKILL');
    process.kill(-installGroup, 'SIGKILL');
    await exited;
    // On disk: the app, OUT and its siblings, the cache, and the whole system temp folder rbp used
    // (this test run's; the registry's own files, which do hold the token, left out).
    const onDisk = await execa('grep', ['-rlaF', '--exclude-dir=verdaccio', '-e', token, os.tmpdir()], { reject: false });
    // Other tests run meanwhile: a file they remove between grep's listing and its read is no error here.
    const vanished = (line: string) => line.endsWith(': No such file or directory');
    const realErrors = onDisk.stderr.split('\n').filter((l) => l && !vanished(l));
    expect(realErrors, onDisk.stderr).toEqual([]);
    expect([0, 1, 2], onDisk.stderr).toContain(onDisk.exitCode);
    expect(onDisk.stdout).toBe('');
    // The next rbp removes what the killed one left in memory (any rbp may: another test's too).
    const next = await rbp(['detect', app, '--type', 'node']);
    expect(next.exitCode, next.all).toBe(0);
    await expect.poll(inMemory, { timeout: 10_000 }).not.toContain(`/rbp-build-${child.pid}-`);
  });

  it('without credentials: fails with node/registry/refused, saying what to set', async () => {
    const dir = path.join(work, 'none');
    const cache = await cacheFrom(seed, path.join(dir, 'cache'));
    const r = await rbp([
      'build',
      APP,
      '--out',
      path.join(dir, 'out'),
      '--type',
      'node',
      '--cache',
      cache,
      ...envArgs({ CC_NPM_REGISTRY: `127.0.0.1:${port}` }),
    ]);
    expect(r.exitCode, r.all).not.toBe(0);
    expect(r.all).toContain(
      `! ERROR The registry 127.0.0.1:${port} refused to serve the dependencies: no credentials were sent (NPM_TOKEN and CC_NPM_BASIC_AUTH are unset)`,
    );
    expect(r.all).toContain(
      `! Fix:  Set NPM_TOKEN (or CC_NPM_BASIC_AUTH=<user>:<password>) on the application to credentials that may read from 127.0.0.1:${port}`,
    );
    expect(r.all).toContain('(error id: node/registry/refused)');
    expect(r.all).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
  });

  it('with a wrong password: fails with node/registry/refused, the password hidden', async () => {
    const dir = path.join(work, 'wrong');
    const cache = await cacheFrom(seed, path.join(dir, 'cache'));
    const wrong = 'Wr0ng-pa55word-x';
    const r = await rbp([
      'build',
      APP,
      '--out',
      path.join(dir, 'out'),
      '--type',
      'node',
      '--cache',
      cache,
      ...envArgs({ CC_NPM_BASIC_AUTH: `${USER}:${wrong}`, CC_NPM_REGISTRY: `127.0.0.1:${port}` }),
    ]);
    expect(r.exitCode, r.all).not.toBe(0);
    expect(r.all).toContain('refused to serve the dependencies: CC_NPM_BASIC_AUTH was sent');
    expect(r.all).toContain('(error id: node/registry/refused)');
    expect(r.all).not.toContain(wrong);
    expect(r.all).not.toContain(Buffer.from(`${USER}:${wrong}`).toString('base64'));
    expect(await filesHolding([wrong, Buffer.from(`${USER}:${wrong}`).toString('base64')], [dir])).toBe('');
  });
});
