/**
 * The npm package: `npm pack` ships the bundles and docs only, README links resolve inside the
 * package and the repository, and the tarball installed globally into a temporary prefix (and run
 * through npx) works with no runtime dependency to fetch.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { Layers } from '../../lib/cnb/layers.ts';
import { installNode, toolRegistryClient } from '../../lib/js-project/node-tools.ts';
import { Logger } from '../../lib/log.ts';
import { FIXTURES, ROOT, tmpDir } from '../helpers/rbp.ts';

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; dependencies?: object; files: string[] };
let tarball: string;
let files: string[];
// A clean npm environment: its own cache and no user config, so nothing here touches the machine's.
const npmEnv = () => ({
  npm_config_cache: tmpDir('rbp-npm-cache-'),
  npm_config_userconfig: path.join(tmpDir(), 'npmrc'),
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
});

/** `npm install -g` of the tarball into a temporary prefix, once for the file. */
let prefixDir: Promise<string> | undefined;
function installed(): Promise<string> {
  return (prefixDir ??= (async () => {
    const prefix = tmpDir('rbp-prefix-');
    await execa('npm', ['install', '--global', '--prefix', prefix, tarball], { env: npmEnv() });
    return prefix;
  })());
}

beforeAll(async () => {
  const dest = tmpDir('rbp-pack-');
  // dist/ is built by the test run; --ignore-scripts keeps prepack from rebuilding it under running tests.
  const r = await execa('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dest], { cwd: ROOT, env: npmEnv() });
  const info = (JSON.parse(r.stdout) as { filename: string; files: { path: string }[] }[])[0]!;
  tarball = path.join(dest, info.filename);
  files = info.files.map((f) => f.path);
}, 120_000);

describe('npm package', () => {
  it('is publishable: not private, a prepack that builds, license, repository, keywords', () => {
    const p = pkg as Record<string, unknown>;
    expect(p.private).toBeUndefined();
    expect((p.scripts as Record<string, string>).prepack).toBe('npm run build');
    expect(p.license).toBe('Apache-2.0');
    expect(fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8')).toContain('Apache License\n                           Version 2.0');
    expect((p.repository as { url: string }).url).toMatch(/^git\+https:\/\//);
    expect((p.keywords as string[]).length).toBeGreaterThan(3);
  });

  it('prepack builds dist/: packing a checkout that has none still ships the bundles, and --json prints JSON alone', async () => {
    // A copy of the sources (node_modules linked), so the build runs there, not under running tests.
    const copy = tmpDir('rbp-checkout-');
    for (const f of ['package.json', 'README.md', 'LICENSE', 'tsconfig.json', 'lib', 'buildpacks', 'scripts'])
      fs.cpSync(path.join(ROOT, f), path.join(copy, f), { recursive: true });
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
    const r = await execa('npm', ['pack', '--dry-run', '--json'], { cwd: copy, env: npmEnv() });
    // The build's progress goes to stderr: a release script parses stdout whole.
    const packed = (JSON.parse(r.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    expect(packed).toEqual(expect.arrayContaining(['dist/rbp.js', 'dist/buildpacks/static/bin/build']));
  }, 180_000);

  it("ships the bundles, the license, the docs and the operators' tool scripts, never sources, tests or fixtures", () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'dist/rbp.js',
        'LICENSE',
        'README.md',
        'package.json',
        'dist/buildpacks/node/bin/build',
        'scripts/tools/README.md',
        'scripts/tools/caddy.sh',
        'scripts/tools/patches/frankenphp-1.11.1-request-during-init.patch',
      ]),
    );
    // scripts/tools/ installs the contract's tools for offline operators (RBP_TOOL_*): it ships.
    expect(
      files
        .filter((f) => /^(test|fixtures|scripts|bench)\//.test(f) && !f.startsWith('scripts/tools/'))
        .concat(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))),
    ).toEqual([]);
    // dist/rbp.js runs the CLI bundle beside it; the code cache rbp makes for itself there stays
    // out (it names the bundle's path on this machine: an installed rbp makes its own).
    expect(files).toEqual(expect.arrayContaining(['dist/rbp.bundle.cjs', 'dist/package.json']));
    expect(files.filter((f) => f.startsWith('dist/rbp'))).toEqual(['dist/rbp', 'dist/rbp.bundle.cjs', 'dist/rbp.js']);
    // A guard against what should not ship: the count of what should (bundles and the libraries set
    // aside beside them, docs, tool scripts and their patches).
    expect(files.length).toBeLessThan(100);
  });

  it('bundles every library: no runtime dependency for a global install to fetch', () => {
    expect(pkg.dependencies ?? {}).toEqual({});
  });

  it('README links resolve in the repository and in the package', () => {
    const docs = files.filter((f) => f.endsWith('.md'));
    expect(docs).toContain('README.md');
    for (const doc of docs) {
      const text = fs.readFileSync(path.join(ROOT, doc), 'utf8');
      for (const m of text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/i.test(target)) continue;
        const rel = path.posix.normalize(path.posix.join(path.posix.dirname(doc), target));
        expect(rel.startsWith('..'), `${doc} links outside the repository: ${target}`).toBe(false);
        expect(fs.existsSync(path.join(ROOT, rel)), `${doc} → ${target} in the repository`).toBe(true);
        expect(
          files.some((f) => f === rel || f.startsWith(`${rel.replace(/\/$/, '')}/`)),
          `${doc} → ${target} in the package`,
        ).toBe(true);
      }
    }
  });

  it('npm install -g of the tarball into a temporary prefix gives a working rbp', async () => {
    const prefix = await installed();
    const installedDir = path.join(prefix, 'lib', 'node_modules', pkg.name);
    expect(fs.existsSync(path.join(installedDir, 'node_modules'))).toBe(false); // nothing else pulled
    const bin = path.join(prefix, 'bin', 'rbp');
    const v = await execa(bin, ['--version']);
    expect(v.stdout).toMatch(new RegExp(`^rbp ${pkg.version.replace(/\./g, '\\.')} `));
    const d = await execa(bin, ['detect', path.join(FIXTURES, 'node-hello'), '--json'], { reject: false });
    expect(d.exitCode, d.stderr).toBe(0);
    expect(JSON.parse(d.stdout).group).toEqual([{ id: 'rbp/node', version: expect.any(String) }]);
  }, 120_000);

  it("--env-file reaches rbp's own check through the installed bin and npx: Node.js never reads it", async () => {
    // Node.js (20, 22 and 24 alike) reads an --env-file anywhere on its command line, even after the
    // script's name, and exits 9 before any JavaScript runs unless `--` ends its options.
    const prefix = await installed();
    const missing = path.join(tmpDir(), 'missing.env');
    const runs = [
      await execa(path.join(prefix, 'bin', 'rbp'), ['deploy', path.join(FIXTURES, 'node-hello'), '--env-file', missing], { reject: false, all: true }),
      await execa(path.join(prefix, 'bin', 'rbp'), ['detect', path.join(FIXTURES, 'node-hello'), `--env-file=${missing}`], { reject: false, all: true }),
      await execa(
        'npx',
        ['--yes', '--package', tarball, '--', 'rbp', 'build', path.join(FIXTURES, 'node-hello'), '--out', path.join(tmpDir(), 'out'), '--env-file', missing],
        { env: npmEnv(), cwd: tmpDir(), reject: false, all: true },
      ),
    ];
    // On Node.js 24 too (the latest LTS; 20 above): the official build, from the registry through lib/deps
    // (the run's download cache holds it once any node build of the run has it).
    const layers = new Layers(tmpDir('rbp-node24-'));
    const log = new Logger({ out: new Writable({ write: (_c, _e, cb) => cb() }), level: 'quiet' });
    const node24 = await installNode(
      { layers, env: process.env, log, npm: toolRegistryClient(process.env, log), types: { build: true, launch: false } },
      '24',
      { what: 'this test' },
    );
    runs.push(
      await execa(path.join(prefix, 'bin', 'rbp'), ['deploy', path.join(FIXTURES, 'node-hello'), '--env-file', missing], {
        reject: false,
        all: true,
        env: { PATH: `${node24.binDir}:${process.env.PATH}` },
      }),
    );
    const v = await execa(path.join(prefix, 'bin', 'rbp'), ['--version'], { env: { PATH: `${node24.binDir}:${process.env.PATH}` } });
    expect(v.stdout).toMatch(/\(node v24\.\d+\.\d+, /);
    for (const r of runs) {
      expect(r.all).toContain('(error id: platform/env-file/not-found)');
      expect(r.all).not.toContain(`node: ${missing}`);
      expect(r.exitCode, r.all).toBe(2);
    }
  }, 120_000);

  it('npx runs rbp from the tarball', async () => {
    const r = await execa('npx', ['--yes', '--package', tarball, '--', 'rbp', '--version'], { env: npmEnv(), cwd: tmpDir() });
    expect(r.stdout).toContain(`rbp ${pkg.version}`);
    // `npx <package>` (here the tarball, as file:) runs its only bin, as `npx runtime-buildpacks` would.
    const bare = await execa('npx', ['--yes', `file:${tarball}`, 'detect', path.join(FIXTURES, 'static-index-html'), '--json'], {
      env: npmEnv(),
      cwd: tmpDir(),
      reject: false,
    });
    expect(bare.exitCode, bare.stderr).toBe(0);
    expect(JSON.parse(bare.stdout).group[0].id).toBe('rbp/static');
  }, 120_000);
});
