/**
 * bin/detect and bin/build (scripts/build.mjs BOOTSTRAP) take the Node.js carried in the buildpack,
 * else `node` from PATH. The bootstrap forks no `node --version` of its own (the first buildpack's
 * build starts while restore runs): a node from PATH older than 20 is refused by lib/<entry>.cjs,
 * first thing, with the same one clear message. Checked with a real Node.js 18 first on PATH.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import * as tar from 'tar';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, tmpDir } from '../helpers/rbp.ts';

const NODE_18 = '18.20.8';
const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
let bin: string;

beforeAll(async () => {
  const dir = tmpDir('rbp-node18-');
  const url = `https://registry.npmjs.org/node-linux-${arch}/-/node-linux-${arch}-${NODE_18}.tgz`;
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  const tgz = path.join(dir, 'node.tgz');
  fs.writeFileSync(tgz, Buffer.from(await res.arrayBuffer()));
  await tar.x({ file: tgz, cwd: dir, strip: 1, filter: (p) => p.endsWith('/bin/node') });
  bin = path.join(dir, 'bin');
  expect((await execa(path.join(bin, 'node'), ['--version'])).stdout).toBe(`v${NODE_18}`);
}, 300_000);

describe('the buildpacks’ bootstrap with Node.js 18 first on PATH', () => {
  it.each(['detect', 'build'])('bin/%s refuses it with one clear message, and runs nothing', async (entry) => {
    const bp = path.join(ROOT, 'dist', 'buildpacks', 'node');
    const app = tmpDir('rbp-node18-app-');
    fs.writeFileSync(path.join(app, 'package.json'), '{ "scripts": { "start": "node server.js" } }\n');
    const r = await execa(path.join(bp, 'bin', entry), entry === 'detect' ? ['/dev/null', '/dev/null'] : [tmpDir(), tmpDir(), '/dev/null'], {
      cwd: app,
      env: { PATH: `${bin}:${process.env.PATH}`, CNB_BUILDPACK_DIR: bp },
      extendEnv: false,
      reject: false,
    });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `ERROR node: bin/${entry} needs Node.js >= 20: none in this buildpack (node/bin/node) and ${path.join(bin, 'node')} on PATH is v${NODE_18}\n` +
        "Fix: package the buildpack with Node.js (npm run build -- --with-node), or put node >= 20 on the build image's PATH",
    );
  });
});
