/**
 * No Node.js on the build image (part 4): bin/detect and bin/build are POSIX sh bootstraps
 * (scripts/build.mjs) that run the bundled code with the Node.js carried in the buildpack
 * (`npm run build -- --with-node`), else a `node` >= 20 from PATH. Under the reference lifecycle, with
 * a PATH that holds every program of this machine but node:
 * - buildpacks packaged with a Node.js detect, build and serve static-caddy-forced (200);
 * - buildpacks packaged without one fail detect with the bootstrap's one clear message (a detect
 *   error, 21), instead of `env: 'node': No such file or directory` (127).
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { copyFixture, freePort, ROOT, tmpDir, waitForHttp } from '../helpers/rbp.ts';
import { detectAndBuild, detector, makeLayout, skipWithoutLifecycle, startLauncher } from './lifecycle.ts';

const skip = skipWithoutLifecycle('reference lifecycle without node on PATH');
const CADDY = process.env.RBP_TOOL_CADDY ?? (fs.existsSync('/usr/bin/caddy') ? '/usr/bin/caddy' : undefined);
if (!CADDY) console.warn('no-node: no caddy (RBP_TOOL_CADDY or /usr/bin/caddy): the build-and-serve test is skipped');
const TRUST = Object.fromEntries(['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR'].flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : [])));
const NODE_PROGRAMS = new Set(['node', 'nodejs', 'npm', 'npx', 'corepack']);

/** A folder of links to every program in PATH's folders except Node.js's: a build image without node. */
function pathWithoutNode(): string {
  const dir = tmpDir('rbp-no-node-bin-');
  for (const d of ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']) {
    if (!fs.existsSync(d)) continue;
    for (const name of fs.readdirSync(d)) {
      if (NODE_PROGRAMS.has(name) || fs.existsSync(path.join(dir, name))) continue;
      fs.symlinkSync(path.join(d, name), path.join(dir, name));
    }
  }
  return dir;
}

let noNodePath: string;
let carrying: string;
let buildOutput: string;
beforeAll(async () => {
  noNodePath = pathWithoutNode();
  const out = path.join(tmpDir('rbp-with-node-'), 'dist');
  buildOutput = (await execa('node', [path.join(ROOT, 'scripts', 'build.mjs'), '--with-node', '--out', out])).stderr;
  carrying = path.join(out, 'buildpacks');
}, 120_000);

describe('the build', () => {
  it('reports each buildpack’s detect bundle size', () => {
    for (const n of ['node', 'static', 'phpserver']) {
      const kib = (fs.statSync(path.join(carrying, n, 'lib', 'detect.bundle.cjs')).size / 1024).toFixed(1);
      expect(buildOutput).toContain(`${n} ${kib} KiB`);
    }
  });

  it('makes the build bundle’s code cache for the Node.js it carries, at the path it runs from', async () => {
    const bp = path.join(carrying, 'node');
    const bundle = path.join(bp, 'lib', 'build.bundle.cjs');
    const cache = fs.readFileSync(`${bundle}.v8cache`);
    expect(cache.toString('utf8', 0, cache.indexOf(10))).toBe(bundle);
    // What lib/build.cjs does, run by the carried Node.js: V8 takes the cache (a rejected one would be compiled anew).
    const check = `const fs = require('node:fs'); const vm = require('node:vm'); const f = ${JSON.stringify(bundle)};
const c = fs.readFileSync(f + '.v8cache'); const nl = c.indexOf(10);
const s = new vm.Script('(function (exports, require, module, __filename, __dirname) { ' + fs.readFileSync(f, 'utf8') + '\\n})', { filename: f, cachedData: c.subarray(nl + 1) });
process.stdout.write(String(s.cachedDataRejected));`;
    const r = await execa(path.join(bp, 'node', 'bin', 'node'), ['-e', check]);
    expect(r.stdout).toBe('false');
  });
});

const ours = (dir: string) => ['node', 'static', 'phpserver'].map((n) => path.join(dir, n));
const order = (dir: string) => ours(dir).map((d) => [{ dir: d }]);

describe.skipIf(skip)('the buildpacks on a build image without Node.js', () => {
  it('PATH really holds no node', async () => {
    const r = await execa('sh', ['-c', 'command -v node'], { env: { PATH: noNodePath }, extendEnv: false, reject: false });
    expect(r.exitCode).not.toBe(0);
  });

  it.skipIf(!CADDY)(
    'packaged with Node.js: detect, build and serve static-caddy-forced',
    async () => {
      const size = fs.statSync(path.join(carrying, 'static', 'node', 'bin', 'node')).size;
      console.info(`a buildpack carrying Node.js ${process.version} is ${(size / 2 ** 20).toFixed(0)} MiB larger (node/bin/node)`);
      const l = makeLayout(copyFixture('static-caddy-forced'), {
        buildpacks: ours(carrying),
        order: order(carrying),
        userEnv: { CC_STATIC_SERVER: 'caddy' },
        operatorEnv: { ...TRUST, RBP_TOOL_CADDY: CADDY! },
      });
      const r = await detectAndBuild(l, { PATH: noNodePath });
      expect(r.code, r.output).toBe(0);
      expect(r.detect.group?.map((g) => g.id)).toEqual(['rbp/static']);
      const port = await freePort();
      const s = startLauncher(l, { env: { PATH: noNodePath, PORT: String(port), RBP_PUBLIC_PORT: String(port) } });
      try {
        await waitForHttp(port, s.alive, 60_000).catch((e: unknown) => {
          throw new Error(`${(e as Error).message}\n${s.output()}`);
        });
        const res = await fetch(`http://127.0.0.1:${port}/`);
        expect(res.status).toBe(200);
        expect(await res.text()).toContain('Served by caddy file-server');
      } finally {
        await s.stop();
      }
    },
    300_000,
  );

  it('packaged without Node.js: root files alone decide a detect; one that needs Node.js fails with the bootstrap’s message, as a detect error (21)', async () => {
    const dist = path.join(ROOT, 'dist', 'buildpacks');
    const quick = await detector(makeLayout(path.join(ROOT, 'fixtures', 'static-index-html'), { buildpacks: ours(dist), order: order(dist) }), {
      PATH: noNodePath,
    });
    expect(quick.code, quick.output).toBe(0);
    expect(quick.output).toContain('pass: rbp/static@');
    const l = makeLayout(path.join(ROOT, 'fixtures', 'node-hello'), { buildpacks: ours(dist), order: order(dist) });
    const r = await detector(l, { PATH: noNodePath });
    expect(r.code, r.output).toBe(21);
    expect(r.output).toContain('bin/detect needs Node.js >= 20: none in this buildpack (node/bin/node) and no node on PATH');
    expect(r.output).toContain('npm run build -- --with-node');
  });
});
