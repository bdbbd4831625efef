/**
 * Static rules checked by real builds and real servers: CC_WEBROOT wins over the auto-build folder
 * (rule 3), a valid Caddyfile at CC_STATIC_CADDYFILE (rule 5), CC_STATIC_AUTOBUILD_OUTDIR, the webroot's
 * index (index.htm) under each server, and a build on a pico instance (limit 2). The tools are the
 * contract's, from the tool cache: MkDocs (RBP_TOOL_MKDOCS), Caddy 2.11.2 (RBP_TOOL_CADDY), and Static
 * Web Server 2.42.0 installed by the buildpack from a mirror holding the real binary.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { copyFixture, freePort, tmpDir } from '../helpers/rbp.ts';
import { realTool } from '../helpers/tool-cache.ts';
import { build, contractCaddy, dryRun, runChecks, serve, swsMirror, swsTool, workspaceEntries } from './helpers.ts';

const caddy = contractCaddy('static rules tests (Caddy)');
const sws = swsTool('static rules tests (Static Web Server)');
const mkdocs = realTool('RBP_TOOL_MKDOCS', 'static rules tests (MkDocs auto-build)');

const operator = async (extra: Record<string, string> = {}): Promise<Record<string, string>> => ({
  ...(caddy.skip ? {} : { RBP_TOOL_CADDY: caddy.path() }),
  RBP_DEPENDENCY_MIRROR: await swsMirror(sws.path()),
  ...extra,
});
const swsBin = (out: string) => path.join(out, 'layers/rbp_static/static-web-server/bin/static-web-server');
const swsArgs = (out: string, port: number, root: string) => [
  swsBin(out),
  '--host',
  '0.0.0.0',
  '--port',
  String(port),
  '--root',
  root,
  '--index-files',
  'index.html,index.htm',
];

async function servedChecks(out: string, checks: Parameters<typeof runChecks>[1], env: Record<string, string> = {}): Promise<void> {
  const served = await serve(out, await freePort(), env);
  try {
    await runChecks(served, checks);
  } finally {
    await served.stop();
  }
}

describe.skipIf(mkdocs.skip || sws.skip)('rule 3: CC_WEBROOT wins over the auto-build folder (MkDocs built for real)', () => {
  it('a committed folder: it is served, not the MkDocs output', async () => {
    const app = copyFixture('static-mkdocs');
    fs.mkdirSync(path.join(app, 'public'));
    fs.writeFileSync(path.join(app, 'public', 'index.html'), '<h1>the committed public folder</h1>\n');
    const out = path.join(tmpDir(), 'out');
    const r = await build(app, out, { CC_WEBROOT: '/public' }, await operator({ RBP_TOOL_MKDOCS: mkdocs.path() }));
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('auto-build: MkDocs detected from mkdocs.yml');
    expect(r.all).toContain('webroot: /public (CC_WEBROOT is set (it wins over the auto-build folder)), index index.html');
    const port = await freePort();
    const plan = await dryRun(out, port);
    expect(plan.argv).toEqual(swsArgs(out, port, path.join(out, 'workspace', 'public')));
    // Rule 4: CC_WEBROOT is set, so the served folder is kept (the MkDocs output is not served, and not kept).
    expect(workspaceEntries(out)).toContain('public/index.html');
    expect(workspaceEntries(out)).not.toContain('docs/index.md');
    await servedChecks(out, [
      { path: '/', status: 200, contains: 'the committed public folder' },
      { path: '/cc_static_autobuilt/', status: 404 },
      { path: '/mkdocs.yml', status: 404 },
    ]);
  });

  it.skipIf(caddy.skip)('a folder inside the auto-build output: served by Caddy from there', async () => {
    const app = copyFixture('static-mkdocs');
    const out = path.join(tmpDir(), 'out');
    // The output folder is build/site; CC_WEBROOT names that folder inside it, so the webroot comes
    // from CC_WEBROOT (its log says so) while the pages are the generator's.
    const r = await build(
      app,
      out,
      { CC_STATIC_AUTOBUILD_OUTDIR: 'build/site', CC_WEBROOT: '/build/site', CC_STATIC_SERVER: 'caddy' },
      await operator({ RBP_TOOL_MKDOCS: mkdocs.path() }),
    );
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('webroot: /build/site (CC_WEBROOT is set (it wins over the auto-build folder)), index index.html');
    const port = await freePort();
    const plan = await dryRun(out, port);
    expect(plan.argv).toEqual([caddy.path(), 'file-server', '--root', path.join(out, 'workspace', 'build', 'site'), '--listen', `:${port}`]);
    const served = await serve(out, await freePort());
    try {
      await runChecks(served, [{ path: '/', status: 200, contains: 'Built by the MkDocs row of the generator table' }]);
    } finally {
      await served.stop();
    }
  });
});

describe.skipIf(mkdocs.skip || caddy.skip || sws.skip)('CC_STATIC_AUTOBUILD_OUTDIR: MkDocs built for real into site/', () => {
  it('builds into site, keeps only it, and serves it', async () => {
    const out = path.join(tmpDir(), 'out');
    const r = await build(
      copyFixture('static-mkdocs'),
      out,
      { CC_STATIC_AUTOBUILD_OUTDIR: 'site', CC_STATIC_SERVER: 'caddy' },
      await operator({ RBP_TOOL_MKDOCS: mkdocs.path() }),
    );
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('auto-build: MkDocs detected from mkdocs.yml, building into /site');
    expect(r.all).toContain(`build command: ${mkdocs.path()} build --site-dir site`);
    expect(r.all).toContain('webroot: /site (the auto-build output folder), index index.html');
    expect(workspaceEntries(out).filter((e) => !e.includes('/'))).toEqual(['site']);
    expect(fs.existsSync(path.join(out, 'workspace', 'cc_static_autobuilt'))).toBe(false);
    const plan = await dryRun(out, 18080);
    expect(plan.argv).toEqual([caddy.path(), 'file-server', '--root', path.join(out, 'workspace', 'site'), '--listen', ':18080']);
    const served = await serve(out, await freePort());
    try {
      await runChecks(served, [{ path: '/', status: 200, contains: 'Built by the MkDocs row of the generator table' }]);
    } finally {
      await served.stop();
    }
  });
});

describe.skipIf(caddy.skip || sws.skip)('rule 5: a valid Caddyfile at CC_STATIC_CADDYFILE (Caddy for real)', () => {
  it('runs caddy run with that file, and serves with it', async () => {
    const app = copyFixture('static-caddyfile');
    fs.mkdirSync(path.join(app, 'conf'));
    fs.renameSync(path.join(app, 'Caddyfile'), path.join(app, 'conf', 'Caddyfile.prod'));
    const out = path.join(tmpDir(), 'out');
    const r = await build(app, out, { CC_STATIC_CADDYFILE: 'conf/Caddyfile.prod' }, await operator());
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).not.toContain('server: Static Web Server');
    const ws = path.join(out, 'workspace');
    const plan = await dryRun(out, await freePort());
    expect(plan.argv).toEqual([caddy.path(), 'run', '--config', path.join(ws, 'conf', 'Caddyfile.prod'), '--adapter', 'caddyfile']);
    const served = await serve(out, await freePort());
    try {
      await runChecks(served, [
        { path: '/', status: 200, contains: "Served by Caddy with the project's Caddyfile", header: ['x-served-by', 'fixture Caddyfile'] },
        { path: '/nope.html', status: 404 },
      ]);
    } finally {
      await served.stop();
    }
  });

  it('without CC_STATIC_CADDYFILE, a Caddyfile elsewhere than the root is not used', async () => {
    const app = copyFixture('static-caddyfile');
    fs.mkdirSync(path.join(app, 'conf'));
    fs.renameSync(path.join(app, 'Caddyfile'), path.join(app, 'conf', 'Caddyfile.prod'));
    const out = path.join(tmpDir(), 'out');
    const r = await build(app, out, {}, await operator());
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('server: Static Web Server');
    expect((await dryRun(out, 18080)).argv[0]).toBe(swsBin(out));
    // Static Web Server serves the root as it is: the Caddyfile's header is not there.
    const served = await serve(out, await freePort());
    try {
      const r2 = await served.get('/');
      expect(r2.status).toBe(200);
      expect(r2.headers.get('x-served-by')).toBeNull();
    } finally {
      await served.stop();
    }
  });
});

describe.skipIf(sws.skip)('limit 2: static runs on a pico instance', () => {
  it('builds static-index-html with --instance pico', async () => {
    const out = path.join(tmpDir(), 'out');
    const r = await build(copyFixture('static-index-html'), out, {}, await operator(), undefined, ['--instance', 'pico']);
    expect(r.exitCode, r.all).toBe(0);
    expect(fs.readFileSync(path.join(out, 'rbp.toml'), 'utf8')).toMatch(/^instance = "pico"$/m);
    const plan = await dryRun(out, 18080);
    expect(plan.argv[0]).toBe(swsBin(out));
  });
});

describe.skipIf(sws.skip)('the webroot, served for real', () => {
  it('Static Web Server serves index.htm as the index, and nothing beside the webroot (even kept, even with ../)', async () => {
    const out = path.join(tmpDir(), 'out');
    // notes.txt is kept in the application by the override, beside the webroot /public.
    const r = await build(
      copyFixture('static-webroot-htm'),
      out,
      { CC_WEBROOT: '/public', CC_OVERRIDE_BUILDCACHE: 'public:sws.toml:notes.txt' },
      await operator(),
    );
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('webroot: /public (CC_WEBROOT is set), index index.htm');
    expect(workspaceEntries(out)).toContain('notes.txt');
    const served = await serve(out, await freePort());
    try {
      await runChecks(served, [
        { path: '/', status: 200, contains: 'Served from public/index.htm' },
        { path: '/index.htm', status: 200, contains: 'Served from public/index.htm' },
        { path: '/notes.txt', status: 404 },
      ]);
      for (const p of ['/%2e%2e/notes.txt', '/..%2fnotes.txt']) {
        const up = await served.get(p);
        expect(up.status, p).not.toBe(200);
        expect(up.body, p).not.toContain(fs.readFileSync(path.join(out, 'workspace', 'notes.txt'), 'utf8').trim());
      }
    } finally {
      await served.stop();
    }
  });

  it.skipIf(caddy.skip)('caddy file-server (forced) does not take index.htm as the index: the build says so, and / is a 404', async () => {
    const out = path.join(tmpDir(), 'out');
    const r = await build(copyFixture('static-webroot-htm'), out, { CC_WEBROOT: '/public', CC_STATIC_SERVER: 'caddy' }, await operator());
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain(
      "caddy file-server does not take /public/index.htm as the index of /public (its index names are index.html and index.txt): the site's / will answer 404",
    );
    await servedChecks(out, [
      { path: '/', status: 404 },
      { path: '/index.htm', status: 200, contains: 'Served from public/index.htm' },
      { path: '/notes.txt', status: 404 },
    ]);
  });

  it('the webroot must hold an index after the build: a CC_BUILD_COMMAND writing none fails the build', async () => {
    const out = path.join(tmpDir(), 'out');
    const r = await build(
      copyFixture('static-build-command'),
      out,
      { CC_BUILD_COMMAND: 'mkdir -p dist && echo hi > dist/other.html', CC_WEBROOT: '/dist' },
      await operator(),
    );
    expect(r.exitCode).not.toBe(0);
    expect(r.all).toContain('static/webroot/no-index');
    expect(r.all).toContain('/dist holds: other.html');
  });
});
