/**
 * Composer (contract, `phpserver` files): when composer.json exists, dependencies are installed at
 * build with `--no-interaction --no-progress --no-scripts` (CC_PHP_COMPOSER_FLAGS replaces them) plus
 * `--no-dev`, which CC_PHP_DEV_DEPENDENCIES=install removes whatever the flags say. A composer.phar at
 * the root is the Composer used. vendor/ is cached keyed on the lock file, the PHP version and the
 * flags: a rebuild with none of them changed restores it and does not run Composer. The cache and
 * the app share vendor/'s files as hard links (lib/fsx.ts linkTree): nothing is copied.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Layers } from '../../../lib/cnb/layers.ts';
import { appendSbom } from '../../../lib/cnb/sbom.ts';
import { composerComponents } from '../../../lib/cnb/sbom-deps.ts';
import { installTool, findOperatorTool, catalogSource, type DependencySpec } from '../../../lib/deps/index.ts';
import { UserError } from '../../../lib/errors.ts';
import { linkTree } from '../../../lib/fsx.ts';
import type { Logger } from '../../../lib/log.ts';
import { runStep } from '../../../lib/run-step.ts';
import type { ComposerProject } from './composer-files.ts';
import { raw, spec, value } from '../../../lib/config/read.ts';

/** The base flags (the contract's default of CC_PHP_COMPOSER_FLAGS, declared in lib/config). */
export const DEFAULT_COMPOSER_FLAGS = spec('CC_PHP_COMPOSER_FLAGS').default!.split(' ');

export interface ComposerFlags {
  flags: string[];
  dev: boolean;
  /** Why, for the log. */
  origin: string;
}

/**
 * The flags of `composer install`. CC_PHP_COMPOSER_FLAGS is split on white space (flags do not
 * need quoting); `--no-dev` is added unless CC_PHP_DEV_DEPENDENCIES=install, which also strips one
 * the flags carry.
 */
export function composerFlags(env: Record<string, string | undefined>): ComposerFlags {
  const custom = raw(env, 'CC_PHP_COMPOSER_FLAGS');
  const base = custom !== undefined ? custom.split(/\s+/) : DEFAULT_COMPOSER_FLAGS;
  const dev = value(env, 'CC_PHP_DEV_DEPENDENCIES') === 'install';
  const flags = dev ? base.filter((f) => f !== '--no-dev') : base.includes('--no-dev') ? base : [...base, '--no-dev'];
  const origin = `${custom ? 'CC_PHP_COMPOSER_FLAGS' : 'default flags'}${dev ? ', dev dependencies installed (CC_PHP_DEV_DEPENDENCIES=install)' : ', --no-dev'}`;
  return { flags, dev, origin };
}

export interface ComposerCommand {
  /** The Composer script PHP runs: `composer.phar`, the operator's, or the installed one. */
  script: string;
  label: string;
  version?: string;
}

/** Which Composer runs: the app's composer.phar, RBP_TOOL_COMPOSER, else the buildpack's pinned one. */
export async function findComposer(o: {
  appDir: string;
  env: Record<string, string | undefined>;
  layers: Layers;
  specs: DependencySpec[];
  log: Logger;
}): Promise<ComposerCommand> {
  const phar = path.join(o.appDir, 'composer.phar');
  if (fs.statSync(phar, { throwIfNoEntry: false })?.isFile()) {
    o.log.info('using composer.phar from the project root');
    return { script: 'composer.phar', label: 'composer.phar (project root)' };
  }
  const operator = await findOperatorTool({
    id: 'composer',
    env: o.env,
    log: o.log,
    versionArgs: ['--version'],
    versionPattern: /Composer (?:version )?v?(\d+\.\d+\.\d+)/,
    sbom: { layersDir: o.layers.dir, target: 'build' },
  });
  if (operator) return { script: operator.path, label: `${operator.path} (RBP_TOOL_COMPOSER)`, ...(operator.version ? { version: operator.version } : {}) };
  const tool = await installTool({
    layers: o.layers,
    layerName: 'composer',
    source: catalogSource(o.specs, 'composer'),
    constraint: '*',
    log: o.log,
    env: o.env,
    types: {},
  });
  return { script: tool.path, label: `Composer ${tool.version}`, ...(tool.version ? { version: tool.version } : {}) };
}

export interface VendorCacheKey extends Record<string, unknown> {
  inputs: string;
  sha256: string;
  php: string;
  flags: string;
}

export interface ComposerInstallOptions {
  appDir: string;
  project: ComposerProject;
  flags: ComposerFlags;
  composer: ComposerCommand;
  /** The `php` that runs Composer (the shim). */
  php: string;
  phpVersion: string;
  /** Environment for Composer: PATH with the php shim, PHP's configuration (PHPRC, PHP_INI_SCAN_DIR). */
  env: Record<string, string>;
  layers: Layers;
  log: Logger;
}

/** Installs vendor/, or restores it from the cache when the key is unchanged. */
export async function composerInstall(o: ComposerInstallOptions): Promise<'restored' | 'installed'> {
  const { log } = o;
  const key: VendorCacheKey = { inputs: o.project.inputs.file, sha256: o.project.inputs.sha256, php: o.phpVersion, flags: o.flags.flags.join(' ') };
  const vendor = path.join(o.appDir, 'vendor');
  const layer = o.layers.get('vendor', { cache: true }, key);
  const cached = path.join(layer.path, 'vendor');
  if (layer.state === 'reused' && fs.existsSync(cached)) {
    await log.step(`restore vendor/ from the cache (${o.project.inputs.file}, PHP ${o.phpVersion} and flags unchanged): Composer not run`, () => {
      fs.rmSync(vendor, { recursive: true, force: true });
      linkTree(cached, vendor);
    });
    writeVendorSbom(o.layers.dir, vendor, log);
    return 'restored';
  }
  log.info(`vendor/ cache: ${layer.state === 'reused' ? 'cached copy missing' : layer.reason}`);
  if (!o.project.lock) log.warn('composer.json has no composer.lock: versions are resolved at every build; commit composer.lock for repeatable builds');

  const home = o.layers.get('composer-home', { cache: true }, { purpose: 'COMPOSER_HOME and download cache' });
  const argv = [o.php, o.composer.script, 'install', ...o.flags.flags];
  const shown = ['php', o.composer.script === 'composer.phar' ? 'composer.phar' : 'composer', 'install', ...o.flags.flags].join(' ');
  const r = await log.step(`${shown} (${o.composer.label}; ${o.flags.origin})`, () =>
    runStep(argv, {
      cwd: o.appDir,
      env: { ...o.env, COMPOSER_HOME: home.path, COMPOSER_CACHE_DIR: path.join(home.path, 'cache'), COMPOSER_ALLOW_SUPERUSER: '1' },
      log,
    }),
  );
  if (!r.ok) {
    o.layers.remove('vendor');
    const tail = r.output.trim().split('\n').slice(-8);
    throw composerFailedError(shown, o.appDir, r.status, tail);
  }
  // Hard links, not a copy: vendor/ stays a real folder of the app (Composer's autoloader finds the
  // app from vendor/'s own path, so it cannot be a symlink into the layer), and the cache shares its files.
  await log.step('cache vendor/', () => {
    fs.rmSync(cached, { recursive: true, force: true });
    if (fs.existsSync(vendor)) linkTree(vendor, cached);
    else fs.mkdirSync(cached, { recursive: true });
  });
  writeVendorSbom(o.layers.dir, vendor, log);
  return 'installed';
}

/**
 * vendor/ is part of the app (the `vendor` layer only caches it), so its packages go into the
 * buildpack's launch SBOM, `launch.sbom.cdx.json`, beside anything already there.
 */
function writeVendorSbom(layersDir: string, vendor: string, log: Logger): void {
  const components = composerComponents(vendor);
  appendSbom(layersDir, 'launch', components);
  log.detail(`SBOM: ${components.length} Composer package(s) in launch.sbom.cdx.json`);
}

/** Composer's install failed: its last lines say why; `status` as lib/run-step.ts says it (`exit 2`, `signal SIGKILL`, `could not start`). */
export function composerFailedError(shown: string, appDir: string, status: string, tail: string[]): UserError {
  return new UserError({
    id: 'phpserver/composer/install-failed',
    title: `Composer could not install the dependencies (${status})`,
    seen: { what: 'command', value: shown, where: appDir },
    rule: 'composer.json dependencies are installed at build; a failed install fails the build',
    fix: 'run the same command locally and fix what Composer reports (composer.json, composer.lock, CC_PHP_COMPOSER_FLAGS)',
    details: tail,
  });
}
