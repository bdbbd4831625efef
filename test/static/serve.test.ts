/**
 * Serving: every server path of rule 5 with the contract's servers, run for real: Static Web Server
 * 2.42.0 (installed by the buildpack from a mirror holding the real binary, see helpers.ts) and Caddy
 * 2.11.2 (RBP_TOOL_CADDY, from the tool cache); with the build cache content of rule 4.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { copyFixture, freePort, RBP, tmpDir, waitForHttp } from '../helpers/rbp.ts';
import { build, contractCaddy, dryRun, runChecks, serve, spec, swsMirror, swsTool, workspaceEntries } from './helpers.ts';
import { keptView } from '../helpers/fixture-spec.ts';

const caddy = contractCaddy('static serve tests (Caddy)');
const sws = swsTool('static serve tests (Static Web Server)');
const swsOperator = async (): Promise<Record<string, string>> => ({ RBP_DEPENDENCY_MIRROR: await swsMirror(sws.path()) });

describe.skipIf(sws.skip).each(['static-index-html', 'static-webroot-htm', 'static-build-command'])('%s (Static Web Server, for real)', (name) => {
  const s = spec(name);
  let out: string;
  let log: string;
  beforeAll(async () => {
    out = path.join(tmpDir(), 'out');
    const r = await build(copyFixture(name), out, s.env, await swsOperator());
    log = r.all;
    expect(r.exitCode, r.all).toBe(0);
  });

  it('installs Static Web Server 2.42.0 through the installer (mirror, checksum, unpack)', () => {
    expect(log).toContain('server: Static Web Server');
    expect(log).toContain('installing static-web-server 2.42.0');
  });

  it('runs it on the port, with the webroot as root and both index names', async () => {
    const port = await freePort();
    const plan = await dryRun(out, port, s.env);
    const webroot = path.join(out, 'workspace', (s.env.CC_WEBROOT ?? '').replace(/^\/+/, ''));
    const config = workspaceEntries(out).includes('sws.toml') ? ['--config-file', path.join(out, 'workspace', 'sws.toml')] : [];
    expect(plan.argv).toEqual([
      path.join(out, 'layers/rbp_static/static-web-server/bin/static-web-server'),
      '--host',
      '0.0.0.0',
      '--port',
      String(port),
      '--root',
      webroot,
      '--index-files',
      'index.html,index.htm',
      ...config,
    ]);
    expect(plan.port).toBe(port);
  });

  it('appends CC_STATIC_FLAGS and uses CC_STATIC_PORT, 9000 behind a middleware', async () => {
    const plan = await dryRun(out, 18080, { ...s.env, CC_STATIC_PORT: '8181', CC_STATIC_FLAGS: '--log-level info' });
    expect(plan.argv.slice(3, 5)).toEqual(['--port', '8181']);
    expect(plan.argv.slice(-2)).toEqual(['--log-level', 'info']);
    const behind = await dryRun(out, 18080, { ...s.env, CC_STATIC_PORT: '8181', CC_REDIRECTOR_PROJECT_KEY: 'x' });
    expect(behind.argv.slice(3, 5)).toEqual(['--port', '9000']);
  });

  it('keeps exactly the build cache content', () => {
    expect(keptView(workspaceEntries(out), s.kept!)).toEqual([...s.kept!].sort());
  });

  it('serves the pages, nested paths and a 404', async () => {
    const served = await serve(out, await freePort(), s.env);
    try {
      await runChecks(served, s.http ?? []);
    } finally {
      await served.stop();
    }
  });
});

describe.skipIf(sws.skip)('Static Web Server options, for real', () => {
  it('sws.toml at the root is read: its [general] health = true answers /health', async () => {
    const out = path.join(tmpDir(), 'out');
    expect((await build(copyFixture('static-webroot-htm'), out, { CC_WEBROOT: '/public' }, await swsOperator())).exitCode).toBe(0);
    const served = await serve(out, await freePort());
    try {
      expect((await served.get('/health')).status).toBe(200);
    } finally {
      await served.stop();
    }
  });

  it('a port in sws.toml wins over CC_STATIC_PORT, as the build warns: Static Web Server listens on the file\'s', async () => {
    const app = copyFixture('static-webroot-htm');
    const [filePort, ourPort] = [await freePort(), await freePort()];
    fs.appendFileSync(path.join(app, 'sws.toml'), `port = ${filePort}\n`);
    const out = path.join(tmpDir(), 'out');
    const r = await build(app, out, { CC_WEBROOT: '/public' }, await swsOperator());
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain(`sws.toml sets general.port = ${filePort}: Static Web Server gives it precedence over CC_STATIC_PORT`);
    const child = execa('node', [RBP, 'run', out, '--port', String(ourPort)], { reject: false, all: true });
    try {
      await waitForHttp(filePort, () => child.exitCode === null);
      expect((await fetch(`http://127.0.0.1:${filePort}/`)).status).toBe(200);
      await expect(fetch(`http://127.0.0.1:${ourPort}/`)).rejects.toThrow();
    } finally {
      child.kill('SIGTERM');
      await child;
    }
  });

  it('CC_STATIC_FLAGS reach the server: --directory-listing lists a folder without an index', async () => {
    const app = copyFixture('static-index-html');
    const out = path.join(tmpDir(), 'out');
    expect((await build(app, out, {}, await swsOperator())).exitCode).toBe(0);
    const plain = await serve(out, await freePort());
    try {
      expect((await plain.get('/docs/guide/')).status).toBe(404);
    } finally {
      await plain.stop();
    }
    const listing = await serve(out, await freePort(), { CC_STATIC_FLAGS: '--directory-listing true' });
    try {
      const r = await listing.get('/docs/guide/');
      expect(r.status).toBe(200);
      expect(r.body).toContain('page.html');
    } finally {
      await listing.stop();
    }
  });
});

describe.skipIf(caddy.skip || sws.skip).each(['static-caddyfile', 'static-caddy-forced'])('%s (Caddy 2.11.2, for real)', (name) => {
  const s = spec(name);
  let out: string;
  let log: string;
  beforeAll(async () => {
    out = path.join(tmpDir(), 'out');
    const r = await build(copyFixture(name), out, s.env, { RBP_TOOL_CADDY: caddy.path(), ...(await swsOperator()) });
    log = r.all;
    expect(r.exitCode, r.all).toBe(0);
  });

  it("uses the contract's Caddy, with no version warning", () => {
    expect(log).toContain(`using caddy 2.11.2 from RBP_TOOL_CADDY=${caddy.path()}`);
    expect(log).not.toContain('as the contract asks');
    expect(log).not.toContain('static-web-server');
  });

  it('has the exact command line', async () => {
    const port = await freePort();
    const plan = await dryRun(out, port, s.env);
    const ws = path.join(out, 'workspace');
    if (s.server === 'caddy-run') {
      expect(plan.argv).toEqual([caddy.path(), 'run', '--config', path.join(ws, 'Caddyfile'), '--adapter', 'caddyfile']);
      expect(plan.env.PORT).toBe(String(port));
    } else {
      expect(plan.argv).toEqual([caddy.path(), 'file-server', '--root', ws, '--listen', `:${port}`]);
    }
  });

  it('serves pages and 404s a missing one', async () => {
    const served = await serve(out, await freePort(), s.env);
    try {
      await runChecks(served, s.http ?? []);
    } finally {
      await served.stop();
    }
  });

  it('CC_RUN_COMMAND takes priority over the server', async () => {
    const plan = await dryRun(out, 18081, { ...s.env, CC_RUN_COMMAND: 'echo custom $PORT' });
    expect(plan.argv).toEqual(['/bin/sh', '-c', 'exec echo custom $PORT']);
    expect(plan.env.PORT).toBe('18081');
  });
});

describe.skipIf(caddy.skip || sws.skip)('static-caddyfile-invalid (Caddy 2.11.2 validates, Static Web Server serves)', () => {
  it("is reported with Caddy's message, not used, and the default server serves the site", async () => {
    const s = spec('static-caddyfile-invalid');
    const out = path.join(tmpDir(), 'out');
    const r = await build(copyFixture('static-caddyfile-invalid'), out, s.env, { RBP_TOOL_CADDY: caddy.path(), ...(await swsOperator()) });
    expect(r.exitCode, r.all).toBe(0);
    for (const l of s.log ?? []) expect(r.all).toContain(l);
    expect(r.all).toContain('Caddy says: Error: adapting config using caddyfile: /Caddyfile:2: unrecognized directive: this_directive_does_not_exist');
    const plan = await dryRun(out, 18082);
    expect(plan.server).toBe('static-web-server');
    const served = await serve(out, await freePort());
    try {
      await runChecks(served, s.http ?? []);
    } finally {
      await served.stop();
    }
  });
});
