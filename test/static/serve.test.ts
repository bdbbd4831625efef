/**
 * Serving: every server path of rule 5, with the build cache content of rule 4. Caddy runs for real
 * (Debian's 2.6.2 here, via RBP_TOOL_CADDY). Static Web Server cannot be fetched on this machine: its
 * fixtures are built with a mirror holding a fixture archive and checked with `rbp run --dry-run`;
 * they are served for real when RBP_TOOL_STATIC_WEB_SERVER names a real binary.
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { copyFixture, freePort, tmpDir } from '../helpers/rbp.ts';
import { build, caddyTool, dryRun, runChecks, serve, spec, swsMirror, workspaceEntries } from './helpers.ts';

const caddy = await caddyTool();
const realSws = process.env.RBP_TOOL_STATIC_WEB_SERVER;
if (!caddy) console.warn('static serve tests: no caddy on this machine (apt-get install caddy, or RBP_TOOL_CADDY): Caddy tests skipped');
if (!realSws) console.warn('static serve tests: RBP_TOOL_STATIC_WEB_SERVER is not set: Static Web Server is checked by its command line only');

let mirror: string;
beforeAll(async () => {
  mirror = await swsMirror();
});
const operator = (): Record<string, string> => ({ ...(caddy ? { RBP_TOOL_CADDY: caddy } : {}), RBP_DEPENDENCY_MIRROR: mirror });

describe.each(['static-index-html', 'static-webroot-htm', 'static-build-command'])('%s (Static Web Server)', (name) => {
  const s = spec(name);
  let out: string;
  let log: string;
  beforeAll(async () => {
    out = path.join(tmpDir(), 'out');
    const r = await build(copyFixture(name), out, s.env, operator());
    log = r.all;
    expect(r.exitCode, r.all).toBe(0);
  });

  it('installs Static Web Server and runs it on the port, with the webroot as root', async () => {
    expect(log).toContain('server: Static Web Server');
    const port = await freePort();
    const plan = await dryRun(out, port, s.env);
    const webroot = path.join(out, 'workspace', (s.env.CC_WEBROOT ?? '').replace(/^\/+/, ''));
    const config = workspaceEntries(out).includes('sws.toml') ? ['--config-file', path.join(out, 'workspace', 'sws.toml')] : [];
    expect(plan.argv).toEqual([path.join(out, 'layers/rbp_static/static-web-server/bin/static-web-server'), '--host', '0.0.0.0', '--port', String(port), '--root', webroot, ...config]);
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
    expect(workspaceEntries(out)).toEqual(s.kept);
  });

  it.skipIf(!realSws)('serves the site with the real Static Web Server', async () => {
    const rebuilt = path.join(tmpDir(), 'out');
    const r = await build(copyFixture(name), rebuilt, s.env, { RBP_TOOL_STATIC_WEB_SERVER: realSws! });
    expect(r.exitCode, r.all).toBe(0);
    const served = await serve(rebuilt, await freePort(), s.env);
    try {
      await runChecks(served, s.checks ?? []);
    } finally {
      await served.stop();
    }
  });
});

describe.skipIf(!caddy).each(['static-caddyfile', 'static-caddy-forced'])('%s (Caddy, for real)', (name) => {
  const s = spec(name);
  let out: string;
  beforeAll(async () => {
    out = path.join(tmpDir(), 'out');
    const r = await build(copyFixture(name), out, s.env, operator());
    expect(r.exitCode, r.all).toBe(0);
  });

  it('has the exact command line', async () => {
    const port = await freePort();
    const plan = await dryRun(out, port, s.env);
    const ws = path.join(out, 'workspace');
    if (s.server === 'caddy-run') {
      expect(plan.argv).toEqual([caddy, 'run', '--config', path.join(ws, 'Caddyfile'), '--adapter', 'caddyfile']);
      expect(plan.env.PORT).toBe(String(port));
    } else {
      expect(plan.argv).toEqual([caddy, 'file-server', '--root', ws, '--listen', `:${port}`]);
    }
  });

  it('serves pages and 404s a missing one', async () => {
    const served = await serve(out, await freePort(), s.env);
    try {
      await runChecks(served, s.checks ?? []);
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

describe.skipIf(!caddy)('static-caddyfile-invalid', () => {
  it("is reported with Caddy's message, not used, and the default server serves the site", async () => {
    const s = spec('static-caddyfile-invalid');
    const out = path.join(tmpDir(), 'out');
    const r = await build(copyFixture('static-caddyfile-invalid'), out, s.env, operator());
    expect(r.exitCode, r.all).toBe(0);
    for (const l of s.log ?? []) expect(r.all).toContain(l);
    expect(r.all).toContain('Caddy says: Error: adapting config using caddyfile: /Caddyfile:2: unrecognized directive: this_directive_does_not_exist');
    const plan = await dryRun(out, 18082);
    expect(plan.server).toBe('static-web-server');
    expect(plan.argv[0]).toMatch(/static-web-server$/);
  });
});
