/**
 * Yarn Plug'n'Play at launch. An app installed with PnP has no node_modules: `.pnp.cjs` resolves
 * `require()`, and `.pnp.loader.mjs` (when Yarn wrote one) serves ES modules from the zip archives
 * of `.yarn/cache`. `yarn node` preloads them; plain `node` does not ("Cannot find module"). So
 * whenever the built app has them, the `pnp` launch layer appends to NODE_OPTIONS (for the reference
 * launcher as for rbp's) `--require .pnp.cjs` and Yarn's loader, through `--import` of a module that
 * registers it (module.register, Node.js 20.6+ and 18.19+), else `--experimental-loader`.
 *
 * Node.js 22.22.3+, 24.15, 25.7+ and 26.0 read CommonJS sources of ES module imports in a way that a
 * PnP loader without Yarn's workaround fails on ("EBADF: bad file descriptor, fstat"). The loader's
 * own gate (HAS_BROKEN_FSTAT_FOR_ZIP_FDS) says which versions it covers: the build refuses an app
 * whose loader does not cover the Node.js it installed, rather than pick another Node.js.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import semver from 'semver';
import { LayerEnv } from '../../../lib/cnb/env.ts';
import type { Layers } from '../../../lib/cnb/layers.ts';
import { UserError } from '../../../lib/errors.ts';

export const PNP_LAYER = 'pnp';
const PNP_CJS = '.pnp.cjs';
const PNP_JS = '.pnp.js';
const PNP_LOADER = '.pnp.loader.mjs';
/** In the pnp layer: registers Yarn's loader (module.register) unless the process already has it. */
const REGISTER_FILE = 'register-pnp-loader.mjs';

export interface PnpFiles {
  cjs: string;
  loader?: string;
}

/** The built app's Plug'n'Play files, when it has them (Yarn 2 writes `.pnp.js`, Yarn 3 and later `.pnp.cjs`). */
export function pnpFilesOf(appDir: string): PnpFiles | undefined {
  const cjs = [PNP_CJS, PNP_JS].map((f) => path.join(appDir, f)).find((f) => fs.existsSync(f));
  if (!cjs) return undefined;
  const loader = path.join(appDir, PNP_LOADER);
  return { cjs, ...(fs.existsSync(loader) ? { loader } : {}) };
}

/** module.register, which an `--import`ed module calls to add loader hooks: Node.js 20.6+ and 18.19+. */
export function hasModuleRegister(nodeVersion: string): boolean {
  return semver.satisfies(nodeVersion, '>=20.6.0 || ^18.19.0');
}

/** A path as a NODE_OPTIONS word: quoted when it holds whitespace (as Yarn does). */
const word = (p: string) => (/\s/.test(p) ? JSON.stringify(p) : p);

/** The NODE_OPTIONS flags that preload Plug'n'Play for `nodeVersion`; `registerFile` is the --import module's path. */
export function pnpNodeOptions(files: PnpFiles, nodeVersion: string, registerFile: string): string {
  const flags = [`--require ${word(files.cjs)}`];
  if (files.loader)
    flags.push(
      hasModuleRegister(nodeVersion) ? `--import ${word(pathToFileURL(registerFile).href)}` : `--experimental-loader ${pathToFileURL(files.loader).href}`,
    );
  return flags.join(' ');
}

/**
 * The module `--import` runs first in each process: it registers Yarn's loader, unless the process
 * was started by `yarn node` or `yarn run`, which pass Yarn's own `--experimental-loader`.
 */
export function registerModule(loader: string): string {
  const url = pathToFileURL(loader).href;
  return [
    "// Written by rbp/node: Yarn Plug'n'Play's loader for ES modules, for every node process of the app.",
    "import { register } from 'node:module';",
    `const loader = ${JSON.stringify(url)};`,
    "const already = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\\s+/)].some((a) => a.includes('.pnp.loader.mjs'));",
    'if (!already) register(loader);',
    '',
  ].join('\n');
}

/**
 * The `pnp` launch layer: NODE_OPTIONS.append (space-delimited) with the preload flags, and the
 * register module. Written at every build that leaves PnP files; removed otherwise.
 */
export function writePnpLayer(layers: Layers, files: PnpFiles | undefined, nodeVersion: string): string | undefined {
  if (!files) {
    if (fs.existsSync(path.join(layers.dir, `${PNP_LAYER}.toml`))) layers.remove(PNP_LAYER);
    return undefined;
  }
  const layer = layers.fresh(PNP_LAYER, { launch: true }, { node: nodeVersion, loader: Boolean(files.loader) });
  const registerFile = path.join(layer.path, REGISTER_FILE);
  if (files.loader) fs.writeFileSync(registerFile, registerModule(files.loader));
  const flags = pnpNodeOptions(files, nodeVersion, registerFile);
  layer.writeEnv(new LayerEnv().append('NODE_OPTIONS', flags, ' ', 'launch'));
  return flags;
}

/**
 * The Node.js releases whose ES module loader breaks a PnP loader without Yarn's workaround, the
 * first Yarn whose loader covers each, and Node.js releases outside it. From Yarn's own gate
 * (packages/yarnpkg-pnp/sources/esm-loader/loaderFlags.ts; measured in the .pnp.loader.mjs each
 * release writes: none up to 4.13, 25.7+ from 4.14.0, 24.15 from 4.14.1, 22.22.3+ from 4.16.0).
 */
export const EBADF_NODE_RANGES: readonly { node: string; shown: string; yarnFixed: string; nodeOk: string }[] = [
  { node: '>=22.22.3 <23.0.0', shown: '22.22.3 and later 22.x', yarnFixed: '4.16.0', nodeOk: '22.22.2, or 24.16 and later' },
  { node: '>=24.15.0 <24.16.0', shown: '24.15', yarnFixed: '4.14.1', nodeOk: '24.14, or 24.16 and later' },
  { node: '>=25.7.0 <26.0.0', shown: '25.7 and later 25.x', yarnFixed: '4.14.0', nodeOk: '25.6, or 26.1 and later' },
  { node: '>=26.0.0 <26.1.0', shown: '26.0', yarnFixed: '4.14.0', nodeOk: '26.1 and later' },
];

const GATE = /HAS_BROKEN_FSTAT_FOR_ZIP_FDS\s*=\s*([^;\n]+);/;
const TOKEN = /\s*(major|minor|patch|\d+|===|!==|>=|<=|>|<|&&|\|\||\(|\))/y;

/**
 * Whether the loader's own gate works around the bug on `nodeVersion`: false when it has no gate
 * (it predates the workaround). The gate is a boolean of major/minor/patch comparisons; anything
 * else in it is not evaluated (undefined: not judged).
 */
export function loaderCovers(loaderText: string, nodeVersion: string): boolean | undefined {
  const m = GATE.exec(loaderText);
  if (!m) return false;
  const expr = m[1]!.trim();
  TOKEN.lastIndex = 0;
  let consumed = 0;
  while (consumed < expr.length) {
    const t = TOKEN.exec(expr);
    if (!t) return undefined;
    consumed = TOKEN.lastIndex;
  }
  const v = semver.parse(nodeVersion);
  if (!v) return undefined;
  // Only the tokens above: comparisons of three numbers, combined with && and ||.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval, @typescript-eslint/no-unsafe-call -- checked token by token above
  return Boolean(new Function('major', 'minor', 'patch', `return (${expr});`)(v.major, v.minor, v.patch));
}

/** The Yarn that installed, when the build knows it (not after a custom command). */
export interface YarnInfo {
  version: string;
  because: string;
}

/** The app's PnP loader and the Node.js installed must work together: refused at build when the loader would fail with EBADF at launch. */
export function checkPnpLoader(files: PnpFiles | undefined, nodeVersion: string, yarn: YarnInfo | undefined, nodeSource: string): void {
  if (!files?.loader) return;
  const affected = EBADF_NODE_RANGES.find((r) => semver.satisfies(nodeVersion, r.node));
  if (!affected) return;
  if (loaderCovers(fs.readFileSync(files.loader, 'utf8'), nodeVersion) !== false) return;
  throw pnpLoaderError(affected, nodeVersion, nodeSource, yarn);
}

function pnpLoaderError(affected: (typeof EBADF_NODE_RANGES)[number], nodeVersion: string, nodeSource: string, yarn: YarnInfo | undefined): UserError {
  return new UserError({
    id: 'node/pnp/loader-node-incompatible',
    title: `${yarn ? `Yarn ${yarn.version}'s` : 'This'} Plug'n'Play loader fails on Node.js ${nodeVersion} (EBADF: bad file descriptor, fstat)`,
    seen: {
      what: PNP_LOADER,
      value: `${yarn ? `Yarn ${yarn.version} (${yarn.because})` : 'written by the Yarn the build command ran'}; Node.js ${nodeVersion} (${nodeSource})`,
      where: 'the built application',
    },
    rule:
      `Node.js ${affected.shown} reads CommonJS sources of ES module imports in a way that Yarn's PnP loader (.pnp.loader.mjs) works around only from Yarn ${affected.yarnFixed}: ` +
      'an older loader fails at launch with "EBADF: bad file descriptor, fstat" (nodejs/node#62012, yarnpkg/berry#7104).',
    fix:
      `Use a newer Yarn: "packageManager": "yarn@${affected.yarnFixed}" or later in package.json (\`yarn set version ${affected.yarnFixed}\`, then commit package.json, yarn.lock and .yarnrc.yml); ` +
      `or build on a Node.js this Yarn works with: engines.node (or CC_NODE_VERSION when engines.node is unset) on ${affected.nodeOk}.`,
  });
}

/** An install whose output shows the same failure (a dependency's build script run through the PnP loader). */
export function ebadfInstallError(output: string, nodeVersion: string, yarn: YarnInfo | undefined, nodeSource: string): UserError | undefined {
  if (!output.includes('EBADF: bad file descriptor, fstat')) return undefined;
  const affected = EBADF_NODE_RANGES.find((r) => semver.satisfies(nodeVersion, r.node));
  return affected ? pnpLoaderError(affected, nodeVersion, nodeSource, yarn) : undefined;
}
