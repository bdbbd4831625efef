import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { Layers } from '../../../lib/cnb/layers.ts';
import { isUserError } from '../../../lib/errors.ts';
import {
  checkPnpLoader,
  EBADF_NODE_RANGES,
  ebadfInstallError,
  hasModuleRegister,
  loaderCovers,
  pnpFilesOf,
  pnpNodeOptions,
  registerModule,
  writePnpLayer,
} from './pnp.ts';

/** The gate line of the .pnp.loader.mjs each Yarn release writes (measured: `yarn install` of a type=module project). */
const GATES: Record<string, string> = {
  '4.12.0': '',
  '4.14.0': 'const HAS_BROKEN_FSTAT_FOR_ZIP_FDS = major > 25 || major === 25 && minor >= 7;',
  '4.14.1': 'const HAS_BROKEN_FSTAT_FOR_ZIP_FDS = major > 25 || major === 25 && minor >= 7 || major === 24 && minor >= 15;',
  '4.15.0': 'const HAS_BROKEN_FSTAT_FOR_ZIP_FDS = major === 26 && minor < 1 || major === 25 && minor >= 7 || major === 24 && minor >= 15;',
  '4.16.0':
    'const HAS_BROKEN_FSTAT_FOR_ZIP_FDS = major === 26 && minor < 1 || major === 25 && minor >= 7 || major === 24 && minor === 15 || major === 22 && (minor > 22 || minor === 22 && patch >= 3);',
};

function app(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-pnp-'));
  for (const [f, c] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), c);
  return dir;
}

describe('Plug-n-Play at launch', () => {
  it('finds .pnp.cjs (Yarn 3+) or .pnp.js (Yarn 2), and the ESM loader when Yarn wrote one', () => {
    expect(pnpFilesOf(app({ 'package.json': '{}' }))).toBeUndefined();
    const d = app({ '.pnp.cjs': '', '.pnp.loader.mjs': '' });
    expect(pnpFilesOf(d)).toEqual({ cjs: path.join(d, '.pnp.cjs'), loader: path.join(d, '.pnp.loader.mjs') });
    const y2 = app({ '.pnp.js': '' });
    expect(pnpFilesOf(y2)).toEqual({ cjs: path.join(y2, '.pnp.js') });
  });

  it('preloads .pnp.cjs, and registers the loader with --import where module.register exists, else --experimental-loader', () => {
    const files = { cjs: '/workspace/.pnp.cjs', loader: '/workspace/.pnp.loader.mjs' };
    expect(pnpNodeOptions({ cjs: files.cjs }, '24.15.0', '/layers/pnp/r.mjs')).toBe('--require /workspace/.pnp.cjs');
    expect(pnpNodeOptions(files, '24.15.0', '/layers/pnp/r.mjs')).toBe('--require /workspace/.pnp.cjs --import file:///layers/pnp/r.mjs');
    expect(pnpNodeOptions(files, '20.5.1', '/layers/pnp/r.mjs')).toBe('--require /workspace/.pnp.cjs --experimental-loader file:///workspace/.pnp.loader.mjs');
    expect(pnpNodeOptions({ cjs: '/my app/.pnp.cjs' }, '22.0.0', '/x.mjs')).toBe('--require "/my app/.pnp.cjs"');
    expect([hasModuleRegister('20.6.0'), hasModuleRegister('18.19.0'), hasModuleRegister('19.9.0'), hasModuleRegister('18.18.2')]).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });

  it('the register module skips a process that yarn already started with its own loader', () => {
    const m = registerModule('/workspace/.pnp.loader.mjs');
    expect(m).toContain('register(loader)');
    expect(m).toContain('"file:///workspace/.pnp.loader.mjs"');
    expect(m).toContain(".pnp.loader.mjs'))");
  });

  it('writes the pnp launch layer: NODE_OPTIONS appended with a space, for launch only; removed when the app has no PnP', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-pnp-layers-'));
    const layers = new Layers(dir);
    const a = app({ '.pnp.cjs': '', '.pnp.loader.mjs': '' });
    const flags = writePnpLayer(layers, pnpFilesOf(a), '24.15.0');
    expect(fs.readFileSync(path.join(dir, 'pnp', 'env.launch', 'NODE_OPTIONS.append'), 'utf8')).toBe(flags);
    expect(fs.readFileSync(path.join(dir, 'pnp', 'env.launch', 'NODE_OPTIONS.delim'), 'utf8')).toBe(' ');
    expect(fs.readFileSync(path.join(dir, 'pnp', 'register-pnp-loader.mjs'), 'utf8')).toContain(path.join(a, '.pnp.loader.mjs'));
    expect(fs.readFileSync(path.join(dir, 'pnp.toml'), 'utf8')).toMatch(/launch = true/);
    expect(writePnpLayer(layers, undefined, '24.15.0')).toBeUndefined();
    expect(fs.existsSync(path.join(dir, 'pnp.toml'))).toBe(false);
  });
});

describe('the PnP loader and Node.js EBADF incompatibility', () => {
  it('reads each release’s own gate: which Node.js it works around', () => {
    expect(loaderCovers(GATES['4.12.0']!, '24.15.0')).toBe(false);
    expect(loaderCovers(GATES['4.14.0']!, '24.15.0')).toBe(false);
    expect(loaderCovers(GATES['4.14.0']!, '25.7.0')).toBe(true);
    expect(loaderCovers(GATES['4.14.1']!, '24.15.0')).toBe(true);
    expect(loaderCovers(GATES['4.15.0']!, '22.22.3')).toBe(false);
    expect(loaderCovers(GATES['4.16.0']!, '22.22.3')).toBe(true);
    expect(loaderCovers(GATES['4.16.0']!, '22.22.2')).toBe(false);
    // Anything but comparisons of major/minor/patch is not evaluated.
    expect(loaderCovers('const HAS_BROKEN_FSTAT_FOR_ZIP_FDS = process.exit(1) || true;', '24.15.0')).toBeUndefined();
  });

  it('agrees with the table: each affected range is covered from its yarnFixed release on, and not before', () => {
    const order = Object.keys(GATES);
    for (const r of EBADF_NODE_RANGES) {
      const node = semver.minVersion(r.node)!.version;
      for (const yarn of order) expect(loaderCovers(GATES[yarn]!, node), `Yarn ${yarn} on Node.js ${node}`).toBe(semver.gte(yarn, r.yarnFixed));
    }
  });

  it('refuses an affected pair, passes the others', () => {
    const old = app({ '.pnp.cjs': '', '.pnp.loader.mjs': `${GATES['4.14.0']}\n` });
    const files = pnpFilesOf(old);
    const yarn = { version: '4.14.0', because: 'packageManager yarn@4.14.0' };
    let err: unknown;
    try {
      checkPnpLoader(files, '24.15.0', yarn, 'the default, the latest LTS');
    } catch (e) {
      err = e;
    }
    expect(isUserError(err) && (err as { id: string }).id).toBe('node/pnp/loader-node-incompatible');
    expect(() => checkPnpLoader(files, '24.14.1', yarn, 'CC_NODE_VERSION')).not.toThrow();
    expect(() => checkPnpLoader(files, '24.16.0', yarn, 'CC_NODE_VERSION')).not.toThrow();
    expect(() => checkPnpLoader(files, '25.8.0', yarn, 'engines.node')).not.toThrow();
    expect(() => checkPnpLoader(pnpFilesOf(app({ '.pnp.cjs': '' })), '24.15.0', yarn, 'x')).not.toThrow();
  });

  it('names the same failure when an install shows it', () => {
    expect(ebadfInstallError('Error: EBADF: bad file descriptor, fstat\n    at tryStatSync', '24.15.0', undefined, 'x')?.id).toBe(
      'node/pnp/loader-node-incompatible',
    );
    expect(ebadfInstallError('Error: EBADF: bad file descriptor, fstat', '24.14.1', undefined, 'x')).toBeUndefined();
    expect(ebadfInstallError('some other failure', '24.15.0', undefined, 'x')).toBeUndefined();
  });
});
