/**
 * SBOMs of what the app depends on: the node modules layer, Composer's vendor/, operator-provided
 * tools; each file valid CycloneDX (checked with ajv against the CycloneDX JSON schema), and
 * gathered per build under OUT/layers/sbom/ as the lifecycle does.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { composerComponents, nodeModulesComponents, yarnBerryLockComponents } from '../../lib/cnb/sbom-deps.ts';
import { cycloneDx, spdx } from '../../lib/cnb/sbom.ts';
import { copyFixture, rbp, tmpDir } from '../helpers/rbp.ts';
import { editedBuildpack, launchToml, passWith, scriptedApp } from '../lifecycle/helpers.ts';
import { requirement } from '../helpers/requirement.ts';
import { SYSTEM_COMPOSER as COMPOSER, haveFile, makeMirror, operatorEnv, SYSTEM_PHP as PHP } from '../phpserver/support.ts';
import { sbomErrors } from '../package/sbom-schemas.ts';

function expectValid(doc: unknown, format: 'cdx' | 'spdx' = 'cdx'): void {
  expect(sbomErrors(format, doc)).toEqual([]);
}

function write(file: string, data: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, typeof data === 'string' ? data : JSON.stringify(data));
}

describe('CycloneDX and SPDX documents', () => {
  it('the schema check catches an invalid document (so a pass means something)', () => {
    expect(
      sbomErrors('cdx', {
        bomFormat: 'CycloneDX',
        specVersion: '1.4',
        components: [{ type: 'library', name: 'x', licenses: [{ license: { id: 'Not-A-License' } }] }],
      }),
    ).not.toEqual([]);
    expect(sbomErrors('spdx', { spdxVersion: 'SPDX-2.3', SPDXID: 'SPDXRef-DOCUMENT', packages: [{ name: 'x' }] })).not.toEqual([]);
  });

  it('node_modules: every installed package (scoped, nested, pnpm store), integrity from package-lock, licenses as SPDX ids, expressions or names', () => {
    const app = tmpDir('rbp-sbom-');
    const nm = path.join(app, 'node_modules');
    write(path.join(nm, 'ms', 'package.json'), { name: 'ms', version: '2.1.3', license: 'MIT' });
    write(path.join(nm, '@scope', 'pkg', 'package.json'), { name: '@scope/pkg', version: '1.0.0', license: '(MIT OR Apache-2.0)' });
    write(path.join(nm, 'a', 'package.json'), { name: 'a', version: '1.0.0', license: 'SEE LICENSE IN LICENSE.txt' });
    write(path.join(nm, 'a', 'node_modules', 'ms', 'package.json'), { name: 'ms', version: '2.0.0', licenses: [{ type: 'MIT' }] });
    write(path.join(nm, '.pnpm', 'b@3.0.0', 'node_modules', 'b', 'package.json'), { name: 'b', version: '3.0.0' });
    write(path.join(nm, '.bin', 'x'), '#!/bin/sh\n');
    const lock = path.join(app, 'package-lock.json');
    write(lock, {
      lockfileVersion: 3,
      packages: {
        '': { name: 'app' },
        'node_modules/ms': { version: '2.1.3', integrity: 'sha512-6FlzubTLZG3J2a/NVCAleEhjzq5oxgHyaCU9yYXvcLsvoVaHJq/s5xXI6/XXP6tz7R9xAOtHnSO/tXtF3WRTlA==' },
      },
    });
    const c = nodeModulesComponents(nm, lock);
    expect(c.map((x) => x.purl)).toEqual(['pkg:npm/%40scope/pkg@1.0.0', 'pkg:npm/a@1.0.0', 'pkg:npm/b@3.0.0', 'pkg:npm/ms@2.0.0', 'pkg:npm/ms@2.1.3']);
    const doc = cycloneDx(c) as { components: Record<string, unknown>[] };
    expectValid(doc);
    const ms = doc.components.find((x) => x.purl === 'pkg:npm/ms@2.1.3')!;
    expect(ms.hashes).toEqual([{ alg: 'SHA-512', content: expect.stringMatching(/^e8597[0-9a-f]{123}$/) }]);
    expect(ms.licenses).toEqual([{ license: { id: 'MIT' } }]);
    expect(doc.components.find((x) => x.name === 'pkg')).toMatchObject({ group: '@scope', licenses: [{ expression: '(MIT OR Apache-2.0)' }] });
    expect(doc.components.find((x) => x.purl === 'pkg:npm/a@1.0.0')!.licenses).toEqual([{ license: { name: 'SEE LICENSE IN LICENSE.txt' } }]);
    // The same components in SPDX 2.3: a package each, the free license text as a LicenseRef.
    const sp = spdx('rbp_node/modules', c) as { packages: Record<string, unknown>[]; hasExtractedLicensingInfos: unknown[] };
    expectValid(sp, 'spdx');
    expect(sp.packages.map((p) => p.name)).toEqual(['@scope/pkg', 'a', 'b', 'ms', 'ms']);
    expect(sp.packages.find((p) => p.name === '@scope/pkg')!.licenseDeclared).toBe('(MIT OR Apache-2.0)');
    expect(sp.packages.find((p) => p.name === 'a')!.licenseDeclared).toBe('LicenseRef-1');
    expect(sp.hasExtractedLicensingInfos).toEqual([
      { licenseId: 'LicenseRef-1', extractedText: 'SEE LICENSE IN LICENSE.txt', name: 'SEE LICENSE IN LICENSE.txt' },
    ]);
    expect(sp.packages.find((p) => p.versionInfo === '2.1.3')!.checksums).toEqual([{ algorithm: 'SHA512', checksumValue: expect.stringMatching(/^e8597/) }]);
    expect(JSON.stringify(spdx('rbp_node/modules', c))).toBe(JSON.stringify(sp));
  });

  it("Yarn Plug'n'Play: the npm packages of yarn.lock, without workspaces or patches", () => {
    const lock = path.join(tmpDir('rbp-sbom-'), 'yarn.lock');
    write(
      lock,
      [
        '__metadata:\n  version: 8\n',
        '"ms@npm:^2.1.3, ms@npm:^2.1.0":\n  version: 2.1.3\n  resolution: "ms@npm:2.1.3"\n  checksum: 10c0/abc\n',
        '"@types/node@npm:^20":\n  version: 20.1.0\n  resolution: "@types/node@npm:20.1.0"\n',
        '"resolve@patch:resolve@npm%3A1.22.8#~builtin<compat/resolve>":\n  version: 1.22.8\n  resolution: "resolve@patch:resolve@npm%3A1.22.8#~builtin<compat/resolve>::version=1.22.8"\n',
        '"app@workspace:.":\n  version: 0.0.0-use.local\n  resolution: "app@workspace:."\n',
      ].join('\n'),
    );
    const doc = cycloneDx(yarnBerryLockComponents(lock)) as { components: Record<string, unknown>[] };
    expectValid(doc);
    expect(doc.components.map((x) => x.purl)).toEqual(['pkg:npm/%40types/node@20.1.0', 'pkg:npm/ms@2.1.3']);
    expectValid(spdx('rbp_node/modules', yarnBerryLockComponents(lock)), 'spdx');
  });

  it("Composer's vendor/: the packages of vendor/composer/installed.json", () => {
    const vendor = path.join(tmpDir('rbp-sbom-'), 'vendor');
    write(path.join(vendor, 'composer', 'installed.json'), {
      packages: [
        { name: 'monolog/monolog', version: '3.5.0', license: ['MIT'], type: 'library', dist: { shasum: '' } },
        { name: 'acme/tool', version: 'dev-main', license: ['proprietary'], dist: { shasum: 'da39a3ee5e6b4b0d3255bfef95601890afd80709' } },
      ],
    });
    const doc = cycloneDx(composerComponents(vendor)) as { components: Record<string, unknown>[] };
    expectValid(doc);
    expectValid(spdx('rbp_phpserver/launch', composerComponents(vendor)), 'spdx');
    expect(doc.components.map((x) => x.purl)).toEqual(['pkg:composer/acme/tool@dev-main', 'pkg:composer/monolog/monolog@3.5.0']);
    expect(doc.components[0]).toMatchObject({
      group: 'acme',
      hashes: [{ alg: 'SHA-1', content: 'da39a3ee5e6b4b0d3255bfef95601890afd80709' }],
      licenses: [{ license: { name: 'proprietary' } }],
    });
  });
});

const phpTools = requirement(haveFile(PHP) && haveFile(COMPOSER), {
  what: `${PHP} and ${COMPOSER}`,
  how: 'apt-get install php8.2-cli composer',
  who: 'the phpserver SBOM build',
});

describe('the build SBOM, gathered as the lifecycle does', () => {
  it('launch.sbom and launch layers go to layers/sbom/launch/<bp>/, build ones to layers/sbom/build/<bp>/', async () => {
    const bp = editedBuildpack('a', (t) => t.replace('[buildpack]\n', '[buildpack]\nsbom-formats = ["application/vnd.cyclonedx+json"]\n'));
    const bom = (name: string) => JSON.stringify(cycloneDx([{ name, version: '1.0.0' }]));
    const app = scriptedApp({
      'a/detect': passWith(),
      'a/build': [
        'L="$CNB_LAYERS_DIR"',
        `mkdir -p "$L/web" "$L/tools" && printf '[types]\\nlaunch = true\\n' > "$L/web.toml" && printf '[types]\\nbuild = true\\ncache = true\\n' > "$L/tools.toml"`,
        `echo '${bom('web-dep')}' > "$L/web.sbom.cdx.json"`,
        `echo '${bom('tool-dep')}' > "$L/tools.sbom.cdx.json"`,
        `echo '${bom('app-dep')}' > "$L/launch.sbom.cdx.json"`,
        `echo '${bom('build-dep')}' > "$L/build.sbom.cdx.json"`,
        launchToml('[[processes]]\ntype = "web"\ncommand = ["true"]\ndefault = true'),
      ].join('\n'),
    });
    const out = path.join(tmpDir('rbp-out-'), 'out');
    const r = await rbp(['build', app, '--out', out, '--buildpack', bp]);
    expect(r.exitCode, r.all).toBe(0);
    const sbom = path.join(out, 'layers', 'sbom');
    const names = (f: string) => (JSON.parse(fs.readFileSync(path.join(sbom, f), 'utf8')) as { components: { name: string }[] }).components.map((c) => c.name);
    expect(names('launch/test_a/sbom.cdx.json')).toEqual(['app-dep']);
    expect(names('launch/test_a/web/sbom.cdx.json')).toEqual(['web-dep']);
    expect(names('build/test_a/sbom.cdx.json')).toEqual(['build-dep']);
    expect(names('build/test_a/tools/sbom.cdx.json')).toEqual(['tool-dep']);
    // The build-only files themselves are gone from the buildpack's layers, as before.
    expect(fs.existsSync(path.join(out, 'layers', 'test_a', 'build.sbom.cdx.json'))).toBe(false);
  });

  it('node: the modules layer lists the installed packages, and the operator-provided node is named', async () => {
    const app = copyFixture('node-npm-lock');
    const out = path.join(tmpDir('rbp-out-'), 'out');
    const r = await rbp(['build', app, '--out', out], { env: { RBP_TOOL_NODE: process.execPath } });
    expect(r.exitCode, r.all).toBe(0);
    const launch = path.join(out, 'layers', 'sbom', 'launch', 'rbp_node');
    const modules = JSON.parse(fs.readFileSync(path.join(launch, 'modules', 'sbom.cdx.json'), 'utf8')) as {
      components: { purl: string; hashes?: unknown[] }[];
    };
    expectValid(modules);
    const modulesSpdx = JSON.parse(fs.readFileSync(path.join(launch, 'modules', 'sbom.spdx.json'), 'utf8')) as { packages: unknown[] };
    expectValid(modulesSpdx, 'spdx');
    expect(modulesSpdx.packages).toHaveLength(modules.components.length);
    // Nothing of the buildpack's own bookkeeping in the launch layer.
    expect(fs.readdirSync(path.join(out, 'layers', 'rbp_node', 'modules')).filter((f) => f.startsWith('.rbp'))).toEqual([]);
    const ms = modules.components.find((c) => c.purl.startsWith('pkg:npm/ms@2.'));
    expect(ms?.hashes).toHaveLength(1);
    const bpWide = [path.join(launch, 'sbom.cdx.json'), path.join(out, 'layers', 'sbom', 'build', 'rbp_node', 'sbom.cdx.json')].filter((f) => fs.existsSync(f));
    const tools = bpWide.flatMap(
      (f) => (JSON.parse(fs.readFileSync(f, 'utf8')) as { components: { name: string; properties?: { name: string; value: string }[] }[] }).components,
    );
    for (const f of bpWide) expectValid(JSON.parse(fs.readFileSync(f, 'utf8')));
    const node = tools.find((c) => c.name === 'node');
    expect(node?.properties).toEqual(
      expect.arrayContaining([
        { name: 'rbp:source', value: 'operator' },
        { name: 'rbp:path', value: process.execPath },
      ]),
    );
  }, 300_000);

  it.skipIf(phpTools.skip)(
    'phpserver: the Composer packages of vendor/ and the operator PHP and Composer (needs /usr/bin/php and composer)',
    async () => {
      phpTools.value();
      const app = copyFixture('php-composer');
      const out = path.join(tmpDir('rbp-out-'), 'out');
      const r = await rbp(['build', app, '--out', out, '--type', 'phpserver'], { env: operatorEnv(makeMirror()) });
      expect(r.exitCode, r.all).toBe(0);
      const file = path.join(out, 'layers', 'sbom', 'launch', 'rbp_phpserver', 'sbom.cdx.json');
      const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as {
        components: { name: string; purl?: string; properties?: { name: string; value: string }[] }[];
      };
      expectValid(doc);
      expect(
        doc.components.map((c) => c.purl),
        JSON.stringify(doc),
      ).toContain('pkg:composer/rbp-fixtures/greeter@1.2.0');
      // Operator tools used at build only (Composer, the build's php) are in the build SBOM.
      const buildFile = path.join(out, 'layers', 'sbom', 'build', 'rbp_phpserver', 'sbom.cdx.json');
      const all = [doc, ...(fs.existsSync(buildFile) ? [JSON.parse(fs.readFileSync(buildFile, 'utf8')) as typeof doc] : [])].flatMap((d) => d.components);
      const operatorTools = all.filter((c) => c.properties?.some((p) => p.name === 'rbp:source' && p.value === 'operator')).map((c) => c.name);
      expect(operatorTools, JSON.stringify(all)).toEqual(expect.arrayContaining(['composer']));
    },
    300_000,
  );
});
