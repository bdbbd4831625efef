/**
 * Static rules checked by real builds: CC_WEBROOT wins over the auto-build folder (rule 3), a valid
 * Caddyfile at CC_STATIC_CADDYFILE (rule 5), CC_STATIC_AUTOBUILD_OUTDIR, and a build on a pico
 * instance (limit 2). MkDocs and Caddy are the ones this machine has (Debian's, as RBP_TOOL_MKDOCS and
 * RBP_TOOL_CADDY); Static Web Server comes from the helpers' fixture archive and is only looked at
 * through `rbp run --dry-run`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { copyFixture, freePort, tmpDir } from '../helpers/rbp.ts';
import { build, caddyTool, dryRun, runChecks, serve, swsMirror, workspaceEntries } from './helpers.ts';

const caddy = await caddyTool();
const mkdocs = process.env.RBP_TOOL_MKDOCS ?? (await execa('sh', ['-c', 'command -v mkdocs'], { reject: false }).then((r) => (r.exitCode === 0 ? String(r.stdout).trim() : undefined)));
if (!caddy) console.warn('static rules tests: no caddy (apt-get install caddy, or RBP_TOOL_CADDY): Caddy cases skipped');
if (!mkdocs) console.warn('static rules tests: no mkdocs (apt-get install mkdocs, or RBP_TOOL_MKDOCS): auto-build cases skipped');

let mirror: string;
beforeAll(async () => {
  mirror = await swsMirror();
});
const operator = (extra: Record<string, string> = {}): Record<string, string> => ({ ...(caddy ? { RBP_TOOL_CADDY: caddy } : {}), RBP_DEPENDENCY_MIRROR: mirror, ...extra });
const swsBin = (out: string) => path.join(out, 'layers/rbp_static/static-web-server/bin/static-web-server');

describe.skipIf(!mkdocs)('rule 3: CC_WEBROOT wins over the auto-build folder (MkDocs built for real)', () => {
  it('a committed folder: it is served, not the MkDocs output', async () => {
    const app = copyFixture('static-mkdocs');
    fs.mkdirSync(path.join(app, 'public'));
    fs.writeFileSync(path.join(app, 'public', 'index.html'), '<h1>the committed public folder</h1>\n');
    const out = path.join(tmpDir(), 'out');
    const r = await build(app, out, { CC_WEBROOT: '/public' }, operator({ RBP_TOOL_MKDOCS: mkdocs! }));
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('auto-build: MkDocs detected from mkdocs.yml');
    expect(r.all).toContain('webroot: /public (CC_WEBROOT is set (it wins over the auto-build folder)), index index.html');
    const port = await freePort();
    const plan = await dryRun(out, port);
    expect(plan.argv).toEqual([swsBin(out), '--host', '0.0.0.0', '--port', String(port), '--root', path.join(out, 'workspace', 'public')]);
    // Rule 4: CC_WEBROOT is set, so the served folder is kept (the MkDocs output is not served, and not kept).
    expect(workspaceEntries(out)).toContain('public/index.html');
    expect(workspaceEntries(out)).not.toContain('docs/index.md');
  });

  it.skipIf(!caddy)('a folder inside the auto-build output: served by Caddy from there', async () => {
    const app = copyFixture('static-mkdocs');
    const out = path.join(tmpDir(), 'out');
    // The output folder is build/site; CC_WEBROOT names that folder inside it, so the webroot comes
    // from CC_WEBROOT (its log says so) while the pages are the generator's.
    const r = await build(app, out, { CC_STATIC_AUTOBUILD_OUTDIR: 'build/site', CC_WEBROOT: '/build/site', CC_STATIC_SERVER: 'caddy' }, operator({ RBP_TOOL_MKDOCS: mkdocs! }));
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('webroot: /build/site (CC_WEBROOT is set (it wins over the auto-build folder)), index index.html');
    const port = await freePort();
    const plan = await dryRun(out, port);
    expect(plan.argv).toEqual([caddy, 'file-server', '--root', path.join(out, 'workspace', 'build', 'site'), '--listen', `:${port}`]);
    const served = await serve(out, await freePort());
    try {
      await runChecks(served, [{ path: '/', status: 200, contains: 'Built by the MkDocs row of the generator table' }]);
    } finally {
      await served.stop();
    }
  });
});

describe.skipIf(!mkdocs || !caddy)('CC_STATIC_AUTOBUILD_OUTDIR: MkDocs built for real into site/', () => {
  it('builds into site, keeps only it, and serves it', async () => {
    const out = path.join(tmpDir(), 'out');
    const r = await build(copyFixture('static-mkdocs'), out, { CC_STATIC_AUTOBUILD_OUTDIR: 'site', CC_STATIC_SERVER: 'caddy' }, operator({ RBP_TOOL_MKDOCS: mkdocs! }));
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('auto-build: MkDocs detected from mkdocs.yml, building into /site');
    expect(r.all).toContain(`build command: ${mkdocs} build --site-dir site`);
    expect(r.all).toContain('webroot: /site (the auto-build output folder), index index.html');
    expect(workspaceEntries(out).filter((e) => !e.includes('/'))).toEqual(['site']);
    expect(fs.existsSync(path.join(out, 'workspace', 'cc_static_autobuilt'))).toBe(false);
    const plan = await dryRun(out, 18080);
    expect(plan.argv).toEqual([caddy, 'file-server', '--root', path.join(out, 'workspace', 'site'), '--listen', ':18080']);
    const served = await serve(out, await freePort());
    try {
      await runChecks(served, [{ path: '/', status: 200, contains: 'Built by the MkDocs row of the generator table' }]);
    } finally {
      await served.stop();
    }
  });
});

describe.skipIf(!caddy)('rule 5: a valid Caddyfile at CC_STATIC_CADDYFILE (Caddy for real)', () => {
  it('runs caddy run with that file, and serves with it', async () => {
    const app = copyFixture('static-caddyfile');
    fs.mkdirSync(path.join(app, 'conf'));
    fs.renameSync(path.join(app, 'Caddyfile'), path.join(app, 'conf', 'Caddyfile.prod'));
    const out = path.join(tmpDir(), 'out');
    const r = await build(app, out, { CC_STATIC_CADDYFILE: 'conf/Caddyfile.prod' }, operator());
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).not.toContain('server: Static Web Server');
    const ws = path.join(out, 'workspace');
    const plan = await dryRun(out, await freePort());
    expect(plan.argv).toEqual([caddy, 'run', '--config', path.join(ws, 'conf', 'Caddyfile.prod'), '--adapter', 'caddyfile']);
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
    const r = await build(app, out, {}, operator());
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('server: Static Web Server');
    expect((await dryRun(out, 18080)).argv[0]).toBe(swsBin(out));
  });
});

describe('limit 2: static runs on a pico instance', () => {
  it('builds static-index-html with --instance pico', async () => {
    const out = path.join(tmpDir(), 'out');
    const r = await build(copyFixture('static-index-html'), out, {}, operator(), undefined, ['--instance', 'pico']);
    expect(r.exitCode, r.all).toBe(0);
    expect(fs.readFileSync(path.join(out, 'rbp.toml'), 'utf8')).toMatch(/^instance = "pico"$/m);
    const plan = await dryRun(out, 18080);
    expect(plan.argv[0]).toBe(swsBin(out));
  });
});
