/**
 * The dependencies layer: node_modules (or Yarn PnP's files) installed by the chosen package manager,
 * kept in a launch+cache layer whose metadata records what the install depends on: the lock file's
 * digest, the manifest's dependency fields, the runtime, the package manager and the dev-dependency
 * choice. When none of them changed the layer is reused without running the install; the app's own
 * preinstall/install/postinstall scripts still run, since they act on the (new) source.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { execa } from 'execa';
import { parse as parseYaml } from 'yaml';
import type { Layers } from '../../../lib/cnb/layers.ts';
import { writeSbom } from '../../../lib/cnb/sbom.ts';
import { nodeModulesComponents, yarnBerryLockComponents } from '../../../lib/cnb/sbom-deps.ts';
import { UserError } from '../../../lib/errors.ts';
import type { Logger } from '../../../lib/log.ts';
import type { PackageJson } from './package-json.ts';
import { lockFileOf, type DevDependencies, type InstallCommand, type ToolChoice } from './package-manager.ts';
import { hideSecrets, registryRefused, registryRefusedError, withRegistryAuth, type RegistryAuth } from './registry-auth.ts';
import { sshRefused, sshRefusedError, withSshKeys, type SshKeyBinding } from './ssh-key.ts';

export const MODULES_LAYER = 'modules';
export const PACKAGE_CACHE_LAYER = 'package-cache';
export const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'] as const;

/** Fields of package.json that change what gets installed (scripts do not: they run again anyway). */
const MANIFEST_FIELDS = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies', 'bundleDependencies', 'overrides', 'resolutions', 'pnpm', 'workspaces', 'packageManager', 'trustedDependencies'];
/** Project files that configure the install. */
const CONFIG_FILES = ['.npmrc', '.yarnrc', '.yarnrc.yml', 'pnpm-workspace.yaml', 'bunfig.toml'];

export interface ModulesMetadata extends Record<string, string> {
  lock: string;
  manifest: string;
  runtime: string;
  manager: string;
  tool: string;
  dev: string;
  registry: string;
}

function digest(data: string | Buffer): string {
  return crypto.createHash('sha256').update(data).digest('hex').slice(0, 16);
}

export function modulesMetadata(o: {
  appDir: string;
  pkg: PackageJson;
  choice: ToolChoice;
  managerVersion: string;
  runtime: string;
  dev: DevDependencies;
  nodeEnv: string;
  registry: string;
  custom?: string;
}): ModulesMetadata {
  const lockName = lockFileOf(o.appDir, o.choice.manager);
  const lock = lockName ? `${lockName} ${digest(fs.readFileSync(path.join(o.appDir, lockName)))}` : 'none';
  const pkg = o.pkg as Record<string, unknown>;
  const fields = Object.fromEntries(MANIFEST_FIELDS.filter((f) => pkg[f] !== undefined).map((f) => [f, pkg[f]]));
  const configs = CONFIG_FILES.filter((f) => fs.existsSync(path.join(o.appDir, f))).map((f) => `${f}:${digest(fs.readFileSync(path.join(o.appDir, f)))}`);
  return {
    lock,
    manifest: digest(JSON.stringify({ fields, configs, custom: o.custom ?? '' })),
    runtime: o.runtime,
    manager: `${o.choice.manager} ${o.managerVersion}`,
    tool: o.choice.tool,
    dev: `${o.dev} (NODE_ENV=${o.nodeEnv})`,
    registry: o.registry,
  };
}

/** Yarn Berry's linker: `nodeLinker` in .yarnrc.yml (YARN_NODE_LINKER wins); Plug'n'Play by default. */
export function yarnLinker(appDir: string, env: Record<string, string | undefined>): string {
  if (env.YARN_NODE_LINKER) return env.YARN_NODE_LINKER;
  try {
    const rc = parseYaml(fs.readFileSync(path.join(appDir, '.yarnrc.yml'), 'utf8')) as { nodeLinker?: string } | null;
    return rc?.nodeLinker ?? 'pnp';
  } catch {
    return 'pnp';
  }
}

/** What an install leaves in the app that the layer keeps: node_modules, or Plug'n'Play's files. */
export function installOutputs(pnp: boolean): string[] {
  return pnp ? ['.pnp.cjs', '.pnp.loader.mjs', '.yarn/unplugged', '.yarn/install-state.gz', '.yarn/cache'] : ['node_modules'];
}

/** Where each package manager keeps its download cache, inside the package-cache layer. */
export function cacheEnv(cacheDir: string, choice: ToolChoice, env: Record<string, string | undefined>, pnp: boolean): Record<string, string> {
  return {
    npm_config_cache: path.join(cacheDir, 'npm'),
    ...(choice.manager === 'pnpm' ? { npm_config_store_dir: path.join(cacheDir, 'pnpm-store') } : {}),
    ...(choice.manager === 'yarn' ? { YARN_CACHE_FOLDER: path.join(cacheDir, 'yarn') } : {}),
    ...(choice.manager === 'yarn-berry'
      ? // Plug'n'Play points at its zip archives: they must sit in the app (.yarn/cache), not in a global cache.
        pnp
        ? { YARN_ENABLE_GLOBAL_CACHE: 'false', YARN_GLOBAL_FOLDER: path.join(cacheDir, 'yarn-berry') }
        : { YARN_GLOBAL_FOLDER: path.join(cacheDir, 'yarn-berry') }
      : {}),
    BUN_INSTALL_CACHE_DIR: env.CC_BUN_INSTALL_CACHE_DIR?.trim() || path.join(cacheDir, 'bun'),
  };
}

export interface InstallRequest {
  layers: Layers;
  appDir: string;
  pkg: PackageJson;
  choice: ToolChoice;
  metadata: ModulesMetadata;
  command: InstallCommand;
  pnp: boolean;
  /** The environment the install runs in: PATH with the tools, NODE_ENV, caches. */
  env: Record<string, string>;
  auth: RegistryAuth;
  /** Private SSH keys for git dependencies (bindings of type ssh-key): used by the install only. */
  sshKeys?: SshKeyBinding[];
  /** Where bindings are read from (for messages). */
  bindingRoot?: string;
  log: Logger;
}

export interface InstallResult {
  state: 'created' | 'reused';
  reason: string;
  layerPath: string;
}

export async function installDependencies(r: InstallRequest): Promise<InstallResult> {
  const { log, appDir } = r;
  const outputs = installOutputs(r.pnp);
  const layer = r.layers.get(MODULES_LAYER, { launch: true, cache: true }, r.metadata);
  for (const out of r.pnp ? [] : outputs) {
    const p = path.join(appDir, out);
    if (fs.lstatSync(p, { throwIfNoEntry: false })) {
      log.warn(`${out} is part of the source: it is replaced by the installed one (list /${out} in .gitignore)`);
      fs.rmSync(p, { recursive: true, force: true });
    }
  }
  if (layer.state === 'reused') {
    log.info(`dependencies reused (${layer.reason}: ${describe(r.metadata)})`);
    placeOutputs(layer.path, appDir, outputs, r.pnp);
    await runInstallScripts(r);
    writeModulesSbom(r, layer.path);
    return { state: 'reused', reason: layer.reason, layerPath: layer.path };
  }
  log.info(`installing dependencies (${layer.reason})`);
  try {
    const keys = r.sshKeys ?? [];
    if (keys.length) log.info(`git over SSH uses the private key of binding ${keys.map((k) => k.name).join(', ')} (type ssh-key), for the install only`);
    await withSshKeys(keys, (sshEnv) =>
      withRegistryAuth(appDir, r.auth, async (authEnv) => {
        const env = { ...r.env, ...sshEnv, ...(r.choice.manager === 'yarn-berry' ? authEnv : {}) };
        await run(r, r.command.argv, env, 'install');
        if (r.command.then) await run(r, r.command.then, env, 'install');
      }),
    );
    keepOutputs(appDir, layer.path, outputs, r.pnp);
  } catch (e) {
    // A half-done install must not be cached as if it were complete.
    r.layers.remove(MODULES_LAYER);
    throw e;
  }
  writeModulesSbom(r, layer.path);
  return { state: 'created', reason: layer.reason, layerPath: layer.path };
}

/**
 * `modules.sbom.cdx.json`: every package installed in the layer's node_modules, with package-lock's
 * integrity digests when there is one; for Plug'n'Play, the npm packages of yarn.lock. Written at every build, reused layer included (rbp's and the
 * lifecycle's caches do not restore SBOM files of cached layers).
 */
function writeModulesSbom(r: InstallRequest, layerPath: string): void {
  // Plug'n'Play installs no node_modules tree: its lock file says what was installed.
  const lock = ['npm-shrinkwrap.json', 'package-lock.json'].map((f) => path.join(r.appDir, f)).find((f) => fs.existsSync(f));
  const components = r.pnp ? yarnBerryLockComponents(path.join(r.appDir, 'yarn.lock')) : nodeModulesComponents(path.join(layerPath, 'node_modules'), lock);
  writeSbom(r.layers.dir, MODULES_LAYER, components);
  r.log.detail(`SBOM: ${components.length} package(s) in ${MODULES_LAYER}.sbom.cdx.json`);
}

function describe(md: ModulesMetadata): string {
  return `lock ${md.lock}, ${md.runtime}, ${md.manager}, dev dependencies ${md.dev}`;
}

/** After an install: node_modules moves into the layer and the app gets a symlink; PnP files are copied. */
function keepOutputs(appDir: string, layerPath: string, outputs: string[], pnp: boolean): void {
  for (const out of outputs) {
    const src = path.join(appDir, out);
    const dst = path.join(layerPath, out);
    if (pnp) {
      if (fs.existsSync(src)) fs.cpSync(src, dst, { recursive: true, verbatimSymlinks: true });
      continue;
    }
    fs.mkdirSync(path.dirname(dst), { recursive: true });
    if (fs.existsSync(src)) fs.renameSync(src, dst);
    else fs.mkdirSync(dst, { recursive: true });
    fs.symlinkSync(dst, src);
  }
}

/** On reuse: the same links (or copies) into the new source. */
function placeOutputs(layerPath: string, appDir: string, outputs: string[], pnp: boolean): void {
  for (const out of outputs) {
    const src = path.join(layerPath, out);
    const dst = path.join(appDir, out);
    if (!fs.existsSync(src)) continue;
    if (pnp) {
      fs.cpSync(src, dst, { recursive: true, force: false, verbatimSymlinks: true });
      continue;
    }
    fs.mkdirSync(path.dirname(dst), { recursive: true });
    fs.symlinkSync(src, dst);
  }
}

/** The app's own install scripts, which the package manager runs on a fresh install. */
async function runInstallScripts(r: InstallRequest): Promise<void> {
  const scripts = INSTALL_SCRIPTS.filter((s) => r.pkg.scripts?.[s]);
  if (scripts.length === 0) return;
  const runner: Record<string, string[]> = { npm: ['npm', 'run'], pnpm: ['pnpm', 'run'], yarn: ['yarn', 'run'], 'yarn-berry': ['yarn', 'run'], bun: ['bun', 'run'], custom: ['npm', 'run'] };
  for (const s of scripts) {
    await r.log.step(`run the app's ${s} script (${r.pkg.scripts![s]})`, () => run(r, [...runner[r.choice.manager]!, s], r.env, s));
  }
}

async function run(r: InstallRequest, argv: string[], env: Record<string, string>, what: string): Promise<void> {
  const shown = argv[0] === '/bin/sh' ? argv[2]! : argv.join(' ');
  const t0 = performance.now();
  r.log.info(`$ ${hideSecrets(shown, env)}`);
  const child = execa(argv[0]!, argv.slice(1), { cwd: r.appDir, env, extendEnv: false, reject: false, stdin: 'ignore', all: true, buffer: false });
  let tail = '';
  // Whole lines only: a secret split across two chunks would escape the masking.
  let pending = '';
  const decoder = new StringDecoder('utf8');
  const emit = (text: string) => {
    const shownText = hideSecrets(text, env);
    tail = (tail + shownText).slice(-16_384);
    r.log.raw(shownText.replace(/^(?=.)/gm, '    '));
  };
  child.all?.on('data', (d: Buffer) => {
    pending += decoder.write(d);
    const end = pending.lastIndexOf('\n') + 1;
    if (end === 0) return;
    emit(pending.slice(0, end));
    pending = pending.slice(end);
  });
  const res = await child;
  pending += decoder.end();
  if (pending) emit(`${pending}\n`);
  if (res.exitCode !== 0 && what === 'install' && registryRefused(tail)) throw registryRefusedError(r.auth, r.env, hideSecrets(shown, env));
  if (res.exitCode !== 0 && what === 'install' && sshRefused(tail)) throw sshRefusedError(r.sshKeys ?? [], r.bindingRoot ?? 'the bindings directory', hideSecrets(shown, env));
  if (res.exitCode !== 0) {
    throw new UserError({
      id: `node/${what === 'install' ? 'install' : 'install-script'}/failed`,
      title: what === 'install' ? 'Installing the dependencies failed' : `The ${what} script failed`,
      seen: { what: 'command', value: hideSecrets(shown, env), where: r.appDir },
      rule: what === 'install' ? 'The dependencies are installed with the selected package manager (CC_NODE_BUILD_TOOL or the lock file).' : `Scripts ${INSTALL_SCRIPTS.join(', ')} run in the build phase and must succeed.`,
      fix: 'Read the output above: run the same command locally, fix the cause (lock file out of date, missing package, registry access), and deploy again.',
      details: [`exit ${res.exitCode ?? res.signal} after ${Math.round(performance.now() - t0)}ms`],
    });
  }
  r.log.detail(`done (${((performance.now() - t0) / 1000).toFixed(1)}s)`);
}
