/**
 * The launcher's own Node.js, for real: a static app built with RBP_LAUNCHER_NODE empty (no Node.js
 * known in the run image) gets Node.js 24 from the npm registry in the layer `launcher-node`, its
 * process is `<that node> <launcher>/bin/launch`, a second build reuses the cached layer, and the app
 * serves through it. A default build (rbp's own node as RBP_LAUNCHER_NODE) downloads nothing.
 * One cache directory for the whole file: Node.js is downloaded once. The site is served by caddy
 * (Debian's): Static Web Server would need a dependency mirror, which would then have to hold
 * Node.js too, and Node.js must come from the registry here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { parse } from 'smol-toml';
import { beforeAll, describe, expect, it } from 'vitest';
import { copyFixture, freePort, rbp, tmpDir } from '../helpers/rbp.ts';
import { build, caddyTool, dryRun, envArgs, spec } from '../static/helpers.ts';

const caddy = await caddyTool();
if (!caddy) console.warn('launcher tests: no caddy on this machine (apt-get install caddy, or RBP_TOOL_CADDY): the launcher-node builds are skipped');

const LAYERS = 'layers/rbp_static';
const cache = path.join(tmpDir('rbp-launcher-cache-'), 'cache');
const FIXTURE = 'launcher-static';
const site = spec(FIXTURE);
const withCaddy = (): Record<string, string> => ({ RBP_TOOL_CADDY: caddy! });
/** No Node.js known in the run image: an empty RBP_LAUNCHER_NODE counts as unset. */
const noNode = (): Record<string, string> => ({ ...withCaddy(), RBP_LAUNCHER_NODE: '' });

/** The top-level process of `rbp run --dry-run`: what the platform starts. */
async function processArgv(out: string): Promise<string[]> {
  const r = await rbp(['run', out, '--dry-run', '--port', String(await freePort())]);
  expect(r.exitCode, r.all).toBe(0);
  return (JSON.parse(r.stdout) as { argv: string[] }).argv;
}

let first: { out: string; log: string };

describe.skipIf(!caddy)('without a Node.js in the run image', () => {
  beforeAll(async () => {
    const out = path.join(tmpDir(), 'out');
    const r = await build(copyFixture(FIXTURE), out, site.env, noNode(), cache);
    expect(r.exitCode, r.all).toBe(0);
    first = { out, log: r.all };
  });

  it('installs Node.js 24 from the npm registry into launcher-node and says why', async () => {
    expect(first.log).toContain('no Node.js in the run image given by RBP_LAUNCHER_NODE: installing Node.js 24.x for the launcher');
    expect(first.log).toMatch(/installing node 24\.\d+\.\d+ \(no previous layer\)/);
    expect(first.log).toMatch(/download https:\/\/registry\.npmjs\.org\/node-linux-(x64|arm64)\/-\/node-linux-(x64|arm64)-24\.\d+\.\d+\.tgz/);
    const layer = parse(fs.readFileSync(path.join(first.out, LAYERS, 'launcher-node.toml'), 'utf8')) as { types: Record<string, boolean>; metadata: Record<string, string> };
    expect(layer.types).toEqual({ launch: true, build: false, cache: true });
    expect(layer.metadata).toMatchObject({ id: 'node', version: expect.stringMatching(/^24\.\d+\.\d+$/), sha: expect.stringMatching(/^sha512:/) });
    // Headers and docs are left out of the image.
    expect(fs.readdirSync(path.join(first.out, LAYERS, 'launcher-node')).sort()).toEqual(['LICENSE', 'bin', 'package.json']);
  });

  it('starts the launch entrypoint with that node, by absolute path', async () => {
    const node = path.join(first.out, LAYERS, 'launcher-node/bin/node');
    const argv = await processArgv(first.out);
    expect(argv).toEqual([node, path.join(first.out, LAYERS, 'launcher/bin/launch')]);
    const v = await execa(node, ['--version']);
    expect(v.stdout).toMatch(/^v24\.\d+\.\d+$/);
    // The entrypoint itself answers through it: the static runtime's plan is under `launch`.
    const plan = await dryRun(first.out, await freePort(), site.env);
    expect(plan.argv.slice(0, 2)).toEqual([caddy, 'file-server']);
  });

  it('reuses the cached layer on the next build', async () => {
    const out = path.join(tmpDir(), 'out');
    const r = await build(copyFixture(FIXTURE), out, site.env, noNode(), cache);
    expect(r.exitCode, r.all).toBe(0);
    const version = (first.log.match(/installing node (24\.\d+\.\d+)/) ?? [])[1];
    expect(r.all).toContain(`reused node ${version} (cached)`);
    expect(r.all).toContain(`launcher: Node.js ${version} reused from the cache (layer launcher-node: metadata unchanged)`);
    expect(r.all).not.toMatch(/download https:\/\/registry\.npmjs\.org\/node-linux/);
    expect((await processArgv(out))[0]).toBe(path.join(out, LAYERS, 'launcher-node/bin/node'));
  });

  it('serves through the launcher on the installed node, with no node on rbp’s PATH', async () => {
    const out = first.out;
    const s = site;
    const port = await freePort();
    // PATH holds no node: only the launch layers' bin folders (the launcher-node one among them) are on it.
    const child = execa(process.execPath, [path.join(import.meta.dirname, '../../dist/rbp.js'), 'run', out, '--port', String(port), ...envArgs(s.env)], {
      reject: false,
      all: true,
      env: { NO_COLOR: '1', PATH: '/nonexistent' },
    });
    try {
      let body = '';
      for (let i = 0; i < 150 && !body; i++) {
        body = await fetch(`http://127.0.0.1:${port}/`).then((x) => x.text(), () => '');
        if (!body) await new Promise((res) => setTimeout(res, 100));
      }
      expect(body).toContain('started by a launcher on its own Node.js');
      expect((await fetch(`http://127.0.0.1:${port}/missing.html`)).status).toBe(404);
    } finally {
      child.kill('SIGTERM');
      await child;
    }
  });
});

describe.skipIf(!caddy)('with RBP_LAUNCHER_NODE (rbp sets its own node by default)', () => {
  it('uses it as is: nothing downloaded, no launcher-node layer, the previous one dropped', async () => {
    const out = path.join(tmpDir(), 'out');
    // The shared cache holds launcher-node from the builds above: it must not be kept.
    const r = await build(copyFixture(FIXTURE), out, site.env, withCaddy(), cache);
    expect(r.exitCode, r.all).toBe(0);
    const node = process.env.RBP_LAUNCHER_NODE || (await execa('sh', ['-c', 'command -v node'])).stdout.trim();
    expect(r.all).toContain(`launcher: Node.js ${(await execa(node, ['--version'])).stdout.slice(1)} of the run image (RBP_LAUNCHER_NODE=${node})`);
    expect(r.all).toContain('layer launcher-node of an earlier build removed');
    expect(r.all).not.toContain('installing Node.js 24.x for the launcher');
    expect(fs.existsSync(path.join(out, LAYERS, 'launcher-node'))).toBe(false);
    expect(await processArgv(out)).toEqual([node, path.join(out, LAYERS, 'launcher/bin/launch')]);
  });
});
