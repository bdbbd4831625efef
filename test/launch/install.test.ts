/**
 * The launch's own Node.js, for real. A static site with nothing in front of it gets none: its launch
 * follows the plan stored at build, with no node anywhere (test/launch/stored-plan.test.ts covers that
 * launch). One built with a request flow, and RBP_LAUNCHER_NODE empty (no Node.js known at launch),
 * gets Node.js 24 from the npm registry in the layer `launcher-node`, which the launcher layer links
 * as the planner's: a second build reuses the cached layer, and the app serves through it. A default
 * build (rbp's own node as RBP_LAUNCHER_NODE) downloads nothing. One cache directory for the whole
 * file: Node.js is downloaded once. The site is served by caddy: Static Web Server would need a
 * dependency mirror, which would then have to hold Node.js too, and Node.js must come from the
 * registry here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { parse } from 'smol-toml';
import { beforeAll, describe, expect, it } from 'vitest';
import { copyFixture, freePort, rbp, tmpDir } from '../helpers/rbp.ts';
import { build, caddyTool, envArgs, spec } from '../static/helpers.ts';

const caddy = await caddyTool();
if (!caddy) console.warn('launcher tests: no caddy on this machine (apt-get install caddy, or RBP_TOOL_CADDY): the launcher-node builds are skipped');

const LAYERS = 'layers/rbp_static';
const cache = path.join(tmpDir('rbp-launcher-cache-'), 'cache');
const FIXTURE = 'launcher-static';
const site = spec(FIXTURE);
const withCaddy = (): Record<string, string> => ({ RBP_TOOL_CADDY: caddy! });
/** No Node.js known in the run image: an empty RBP_LAUNCHER_NODE counts as unset. */
const noNode = (): Record<string, string> => ({ ...withCaddy(), RBP_LAUNCHER_NODE: '' });
/** Public access blocked: a Node.js server answers 403 in front of the app, so the image needs a Node.js. */
const blocked = { ...site.env, CC_REQUEST_FLOW: 'block' };

/** The top-level process of `rbp run --dry-run`: what the platform starts. */
async function processArgv(out: string): Promise<string[]> {
  const r = await rbp(['run', out, '--dry-run', '--port', String(await freePort())]);
  expect(r.exitCode, r.all).toBe(0);
  return (JSON.parse(r.stdout) as { argv: string[] }).argv;
}

let first: { out: string; log: string };

describe.skipIf(!caddy)('without a Node.js in the run image, nothing to supervise', () => {
  it('installs no Node.js: the launch follows the plan stored at build; rbp run plans on its own node', async () => {
    const out = path.join(tmpDir(), 'out');
    const r = await build(copyFixture(FIXTURE), out, site.env, noNode(), cache);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain(`- launch: no Node.js in the image: the launch follows the plan stored at build (${caddy}`);
    expect(r.all).not.toContain('installing Node.js');
    expect(fs.existsSync(path.join(out, LAYERS, 'launcher-node'))).toBe(false);
    expect(fs.readdirSync(path.join(out, LAYERS, 'launcher')).sort()).toEqual(['bin', 'decision.toml', 'plan.cjs', 'stored-plan.sh', 'supervise.sh']);
    const d = await rbp(['run', out, '--dry-run', '--port', String(await freePort())]);
    expect(d.exitCode, d.all).toBe(0);
    expect(JSON.parse(d.stdout)).toMatchObject({ argv: [path.join(out, LAYERS, 'launcher/bin/rbp-launch')], launch: { mode: 'exec' } });
  });
});

describe.skipIf(!caddy)('without a Node.js in the run image, a request flow at build', () => {
  beforeAll(async () => {
    const out = path.join(tmpDir(), 'out');
    const r = await build(copyFixture(FIXTURE), out, blocked, noNode(), cache);
    expect(r.exitCode, r.all).toBe(0);
    first = { out, log: r.all };
  });

  it('installs Node.js 24 from the npm registry into launcher-node and says why', async () => {
    expect(first.log).toContain('launch: the image needs a Node.js to plan the launch: the request flow is active');
    expect(first.log).toContain('no Node.js given by RBP_LAUNCHER_NODE: installing Node.js 24.x for the launch');
    expect(first.log).toMatch(/installing node 24\.\d+\.\d+ \(no previous layer\)/);
    // From the registry: downloaded now, or linked from the run's download cache that an earlier build filled from it.
    expect(first.log).toMatch(
      /download https:\/\/registry\.npmjs\.org\/node-linux-(x64|arm64)\/-\/node-linux-(x64|arm64)-24\.\d+\.\d+\.tgz|linked from the download cache .*\(npm registry dist\.integrity\)/,
    );
    const layer = parse(fs.readFileSync(path.join(first.out, LAYERS, 'launcher-node.toml'), 'utf8')) as {
      types: Record<string, boolean>;
      metadata: Record<string, string>;
    };
    expect(layer.types).toEqual({ launch: true, build: false, cache: true });
    expect(layer.metadata).toMatchObject({ id: 'node', version: expect.stringMatching(/^24\.\d+\.\d+$/), sha: expect.stringMatching(/^sha512:/) });
    // Headers and docs are left out of the image.
    expect(fs.readdirSync(path.join(first.out, LAYERS, 'launcher-node')).sort()).toEqual(['LICENSE', 'bin', 'package.json']);
  });

  it('the launch plans on that node, linked relatively from the launcher layer', async () => {
    const node = path.join(first.out, LAYERS, 'launcher-node/bin/node');
    expect(await processArgv(first.out)).toEqual([path.join(first.out, LAYERS, 'launcher/bin/rbp-launch')]);
    expect(fs.readlinkSync(path.join(first.out, LAYERS, 'launcher/planner-node'))).toBe('../launcher-node/bin/node');
    expect((await execa(node, ['--version'])).stdout).toMatch(/^v24\.\d+\.\d+$/);
    // The planner answers on it: the static runtime's plan is under `launch`, the 403 server on that node.
    const r = await rbp(['run', first.out, '--dry-run', '--port', String(await freePort()), ...envArgs(blocked)]);
    expect(r.exitCode, r.all).toBe(0);
    const plan = JSON.parse(r.stdout).launch as { argv: string[]; requestFlow: { block: boolean }; processes: { name: string; argv: string[] }[] };
    expect(plan.argv.slice(0, 2)).toEqual([caddy, 'file-server']);
    expect(plan.requestFlow.block).toBe(true);
    expect(plan.processes[0]).toMatchObject({ name: 'block', argv: [fs.realpathSync(node), '-e', expect.any(String), expect.any(String)] });
  });

  it('reuses the cached layer on the next build', async () => {
    const out = path.join(tmpDir(), 'out');
    const r = await build(copyFixture(FIXTURE), out, blocked, noNode(), cache);
    expect(r.exitCode, r.all).toBe(0);
    const version = (/installing node (24\.\d+\.\d+)/.exec(first.log) ?? [])[1];
    expect(r.all).toContain(`reused node ${version} (cached)`);
    expect(r.all).toContain(`launch: Node.js ${version} reused from the cache (layer launcher-node: metadata unchanged)`);
    expect(r.all).not.toMatch(/download https:\/\/registry\.npmjs\.org\/node-linux/);
    expect(fs.readlinkSync(path.join(out, LAYERS, 'launcher/planner-node'))).toBe('../launcher-node/bin/node');
  });

  it('serves through the launch on the installed node, with no node on rbp’s PATH: 403 in public, the site on the app port', async () => {
    const out = first.out;
    const [port, appPort] = [await freePort(), await freePort()];
    // PATH holds no node: only the launch layers' bin folders (the launcher-node one among them) are on it.
    const child = execa(process.execPath, [path.join(import.meta.dirname, '../../dist/rbp.js'), 'run', out, '--port', String(port), ...envArgs(blocked)], {
      reject: false,
      all: true,
      env: { NO_COLOR: '1', PATH: '/nonexistent', RBP_APP_PORT: String(appPort) },
    });
    try {
      let body = '';
      for (let i = 0; i < 150 && !body; i++) {
        body = await fetch(`http://127.0.0.1:${appPort}/`).then(
          (x) => x.text(),
          () => '',
        );
        if (!body) await new Promise((res) => setTimeout(res, 100));
      }
      expect(body).toContain('started by a launcher on its own Node.js');
      // The app starts first, then the block in front of it: the public port may answer a moment later.
      let status = 0;
      for (let i = 0; i < 150 && !status; i++) {
        status = await fetch(`http://127.0.0.1:${port}/`).then(
          (x) => x.status,
          () => 0,
        );
        if (!status) await new Promise((res) => setTimeout(res, 100));
      }
      expect(status).toBe(403);
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
    const r = await build(copyFixture(FIXTURE), out, blocked, withCaddy(), cache);
    expect(r.exitCode, r.all).toBe(0);
    const node = process.env.RBP_LAUNCHER_NODE || (await execa('sh', ['-c', 'command -v node'])).stdout.trim();
    expect(r.all).toContain(
      `launch: planned at launch on the Node.js the launch environment names (RBP_LAUNCHER_NODE=${node}, ${(await execa(node, ['--version'])).stdout.slice(1)})`,
    );
    expect(r.all).toContain('layer launcher-node of an earlier build removed');
    expect(r.all).not.toContain('installing Node.js 24.x for the launch');
    expect(fs.existsSync(path.join(out, LAYERS, 'launcher-node'))).toBe(false);
    expect(await processArgv(out)).toEqual([path.join(out, LAYERS, 'launcher/bin/rbp-launch')]);
    // The node is the launch environment's: the layer names none.
    expect(fs.existsSync(path.join(out, LAYERS, 'launcher/planner-node'))).toBe(false);
  });
});
