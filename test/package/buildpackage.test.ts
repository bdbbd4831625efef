/**
 * Buildpackages (issue "Ship it", item 1): `rbp package --out DIR` writes our three buildpacks and
 * the composite rbp/auto as OCI layout archives, read back by the image tools of Debian (skopeo,
 * umoci) as a platform reads them; `rbp build --buildpack x.cnb` (or a layout folder) runs the
 * buildpack inside, and a real server built from one answers over HTTP.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa, execaSync } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { readDescriptor } from '../../lib/cnb/descriptor.ts';
import { writeBuildpackage } from '../../lib/package/buildpackage.ts';
import { readLayout } from '../../lib/package/oci-layout.ts';
import { FIXTURES, freePort, have, rbp, tmpDir } from '../helpers/rbp.ts';
import { bp, BUILDPACKS } from '../lifecycle/helpers.ts';
import { requirement } from '../helpers/requirement.ts';

const NAMES = ['node', 'static', 'phpserver', 'auto'];
const skopeo = requirement(await have('skopeo'), { what: 'skopeo', how: 'apt-get install skopeo', who: 'buildpackage.test.ts (its skopeo check)' });
const umoci = requirement(await have('umoci'), { what: 'umoci', how: 'apt-get install umoci', who: 'buildpackage.test.ts (its umoci check)' });

let out: string;
beforeAll(async () => {
  out = tmpDir('rbp-package-');
  const r = await rbp(['package', '--out', out]);
  expect(r.exitCode, r.all).toBe(0);
}, 120_000);

function labels(file: string): Record<string, string> {
  return readLayout(extract(file)).config.config?.Labels ?? {};
}

describe('rbp package --out DIR', () => {
  it('writes rbp-node.cnb, rbp-static.cnb, rbp-phpserver.cnb and rbp-auto.cnb', () => {
    expect(fs.readdirSync(out).sort()).toEqual(NAMES.map((n) => `rbp-${n}.cnb`).sort());
  });

  it('labels each with the entry buildpack and every buildpack layer it holds', () => {
    for (const name of ['node', 'static', 'phpserver']) {
      const l = labels(path.join(out, `rbp-${name}.cnb`));
      const meta = JSON.parse(l['io.buildpacks.buildpackage.metadata']!) as { id: string; version: string; targets: unknown[] };
      const ours = readDescriptor(path.join('dist', 'buildpacks', name)).descriptor;
      expect(meta).toMatchObject({ id: `rbp/${name}`, version: ours.buildpack.version });
      expect(meta.targets).toEqual(ours.targets);
      const layers = JSON.parse(l['io.buildpacks.buildpack.layers']!) as Record<string, Record<string, { api: string; layerDiffID: string }>>;
      expect(Object.keys(layers)).toEqual([`rbp/${name}`]);
      expect(layers[`rbp/${name}`]![ours.buildpack.version]).toMatchObject({ api: '0.10', layerDiffID: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    }
  });

  it("rbp-auto.cnb is the composite rbp/auto whose order is rbp's automatic order, one group per runtime", () => {
    const l = labels(path.join(out, 'rbp-auto.cnb'));
    const layers = JSON.parse(l['io.buildpacks.buildpack.layers']!) as Record<string, Record<string, { order?: { group: { id: string }[] }[] }>>;
    expect(Object.keys(layers).sort()).toEqual(['rbp/auto', 'rbp/node', 'rbp/phpserver', 'rbp/static']);
    const auto = Object.values(layers['rbp/auto']!)[0]!;
    expect(auto.order?.map((g) => g.group.map((e) => e.id))).toEqual([['rbp/node'], ['rbp/static'], ['rbp/phpserver']]);
  });

  it('is reproducible: packaging twice gives the same image digests', async () => {
    const again = tmpDir('rbp-package-again-');
    expect((await rbp(['package', '--out', again])).exitCode).toBe(0);
    for (const n of NAMES) {
      const a = readLayout(extract(path.join(out, `rbp-${n}.cnb`))).manifest;
      const b = readLayout(extract(path.join(again, `rbp-${n}.cnb`))).manifest;
      expect(b).toEqual(a);
    }
  }, 120_000);

  it.skipIf(skopeo.skip)('skopeo reads each archive as an OCI image with the buildpackage labels', async () => {
    skopeo.value();
    for (const n of NAMES) {
      const r = await execa('skopeo', ['inspect', `oci-archive:${path.join(out, `rbp-${n}.cnb`)}`]);
      const info = JSON.parse(r.stdout) as { Labels: Record<string, string>; Layers: string[]; Os: string };
      expect(info.Os).toBe('linux');
      expect(JSON.parse(info.Labels['io.buildpacks.buildpackage.metadata']!).id).toBe(`rbp/${n}`);
      expect(info.Layers).toHaveLength(n === 'auto' ? 4 : 1);
    }
  });

  it.skipIf(umoci.skip)('umoci unpacks rbp-auto.cnb to /cnb/buildpacks/<escaped id>/<version>/ with executable entrypoints', async () => {
    umoci.value();
    const layout = extract(path.join(out, 'rbp-auto.cnb'));
    const bundle = path.join(tmpDir('rbp-umoci-'), 'bundle');
    await execa('umoci', ['unpack', '--rootless', '--image', `${layout}:latest`, bundle]);
    const root = path.join(bundle, 'rootfs', 'cnb', 'buildpacks');
    expect(fs.readdirSync(root).sort()).toEqual(['rbp_auto', 'rbp_node', 'rbp_phpserver', 'rbp_static']);
    for (const n of ['node', 'static', 'phpserver']) {
      const version = fs.readdirSync(path.join(root, `rbp_${n}`))[0]!;
      for (const entry of ['detect', 'build']) {
        const st = fs.statSync(path.join(root, `rbp_${n}`, version, 'bin', entry));
        expect(st.mode & 0o111, `${n} bin/${entry} is executable`).not.toBe(0);
      }
    }
  });
});

function extract(file: string): string {
  const dir = tmpDir('rbp-package-x-');
  execaSync('tar', ['-xf', file, '-C', dir]);
  return dir;
}

describe('rbp build --buildpack <buildpackage>', () => {
  it('detects with the composite in rbp-auto.cnb as with our automatic order', async () => {
    const stat = await rbp(['detect', path.join(FIXTURES, 'static-index-html'), '--buildpack', path.join(out, 'rbp-auto.cnb')]);
    expect(stat.exitCode, stat.all).toBe(0);
    expect(stat.stdout).toContain('group: rbp/static@');
    const node = await rbp(['detect', path.join(FIXTURES, 'node-hello'), '--buildpack', extract(path.join(out, 'rbp-auto.cnb'))]);
    expect(node.exitCode, node.all).toBe(0);
    expect(node.stdout).toContain('group: rbp/node@');
  });

  it('builds and serves an app with a buildpack given as a .cnb archive', async () => {
    const file = path.join(tmpDir('rbp-package-bp-'), 'node-server.cnb');
    await writeBuildpackage(readDescriptor(bp('node-server')), [], file);
    const port = await freePort();
    const r = await rbp([
      'deploy',
      path.join(BUILDPACKS, 'apps', 'http-server'),
      '--buildpack',
      file,
      '--out',
      path.join(tmpDir('rbp-package-out-'), 'out'),
      '--port',
      String(port),
      '--check',
    ]);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stdout).toContain('Response from GET / is 200');
  });

  it('refuses a file that is not a buildpackage with one clear error', async () => {
    const r = await rbp(['detect', path.join(FIXTURES, 'node-hello'), '--buildpack', path.join(FIXTURES, 'node-hello', 'package.json')]);
    expect(r.exitCode).toBe(2);
    expect(r.all).toContain('Not a CNB buildpackage');
    expect(r.all).toContain('(error id: platform/buildpackage/invalid)');
    expect(r.all).not.toMatch(/\n\s+at /);
  });
});
