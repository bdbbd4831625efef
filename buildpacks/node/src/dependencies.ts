/**
 * The dependencies layer: node_modules (or Yarn PnP's files) installed by the chosen package manager,
 * kept in a launch+cache layer whose metadata records what the install depends on: the lock file's
 * digest, the manifest's dependency fields, the runtime, the package manager and the dev-dependency
 * choice. When none of them changed the layer is reused without running the install; the app's own
 * preinstall/install/postinstall scripts still run, since they act on the (new) source.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { Layers } from '../../../lib/cnb/layers.ts';
import { readSbom, writeSbom } from '../../../lib/cnb/sbom.ts';
import { nodeModulesComponents, yarnBerryLockComponents } from '../../../lib/cnb/sbom-deps.ts';
import { UserError } from '../../../lib/errors.ts';
import type { Logger } from '../../../lib/log.ts';
import { runStep } from '../../../lib/run-step.ts';
import type { PackageJson } from './package-json.ts';
import { appManager, type ToolChoice } from '../../../lib/js-project/build-tool.ts';
import type { DevDependencies, InstallCommand } from '../../../lib/js-project/install-command.ts';
import { keyDigest, lockDigest } from '../../../lib/js-project/lock-digest.ts';
import { lockFileOf } from '../../../lib/js-project/lock-files.ts';
import { MANAGERS, PACKAGE_MANAGERS } from '../../../lib/js-project/package-managers.ts';
import { maskSecrets } from '../../../lib/mask.ts';
import { registryRefused, registryRefusedError, withRegistryAuth, type RegistryAuth } from './registry-auth.ts';
import { sshRefused, sshRefusedError, withSshKeys, type SshKeyBinding } from './ssh-key.ts';
import { appFromLayer, keepModules, placeModules } from './modules-placement.ts';
import { keepGeneratedLocks, placeGeneratedLocks, presentLocks } from './generated-locks.ts';

export const MODULES_LAYER = 'modules';
export const PACKAGE_CACHE_LAYER = 'package-cache';
/** Lock files the install wrote (generated-locks.ts): a cache layer of their own, out of the image, reused with the modules. */
export const LOCKS_LAYER = 'generated-locks';
/** 3: every node_modules folder (workspaces' too) in the layer, every link between the app and the layer relative (modules-placement.ts). */
export const MODULES_LAYOUT = '3';
export const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'] as const;

/** Fields of package.json that change what gets installed (scripts do not: they run again anyway). */
const MANIFEST_FIELDS = [
  'dependencies',
  'devDependencies',
  'optionalDependencies',
  'peerDependencies',
  'bundleDependencies',
  'overrides',
  'resolutions',
  'pnpm',
  'workspaces',
  'packageManager',
  'trustedDependencies',
];
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
  /** How the layer holds the modules: a layer of an older layout is installed anew. */
  layout: string;
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
  const lock = lockName ? `${lockName} ${lockDigest(path.join(o.appDir, lockName))}` : 'none';
  const pkg = o.pkg as Record<string, unknown>;
  const fields = Object.fromEntries(MANIFEST_FIELDS.filter((f) => pkg[f] !== undefined).map((f) => [f, pkg[f]]));
  const configs = CONFIG_FILES.filter((f) => fs.existsSync(path.join(o.appDir, f))).map((f) => `${f}:${lockDigest(path.join(o.appDir, f))}`);
  return {
    lock,
    manifest: keyDigest(JSON.stringify({ fields, configs, custom: o.custom ?? '' })),
    runtime: o.runtime,
    manager: `${o.choice.manager} ${o.managerVersion}`,
    tool: o.choice.tool,
    dev: `${o.dev} (NODE_ENV=${o.nodeEnv})`,
    registry: o.registry,
    layout: MODULES_LAYOUT,
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
  return pnp ? ['.pnp.cjs', '.pnp.js', '.pnp.loader.mjs', '.pnp.data.json', '.yarn/unplugged', '.yarn/install-state.gz', '.yarn/cache'] : ['node_modules'];
}

/**
 * Where each package manager keeps its download cache, inside the package-cache layer
 * (package-managers.ts): the app's manager's (the one that installs, or a custom command's), and
 * those set for every build (npm's and Bun's, which the app's scripts may call). `pnp`: that manager
 * is Yarn Berry with Plug'n'Play, whose archives must stay in the app.
 */
export function cacheEnv(cacheDir: string, choice: ToolChoice, env: Record<string, string | undefined>, pnp: boolean): Record<string, string> {
  const entries = MANAGERS.filter((m) => m === appManager(choice) || PACKAGE_MANAGERS[m].cacheInEveryBuild);
  return Object.assign({}, ...entries.map((m) => PACKAGE_MANAGERS[m].cacheEnv?.(cacheDir, { pnp, env }) ?? {})) as Record<string, string>;
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
  /** A cause the build recognises in a failed install's output (the PnP loader's EBADF), as its own error. */
  explain?: (output: string) => UserError | undefined;
  log: Logger;
}

export async function installDependencies(r: InstallRequest): Promise<void> {
  const { log, appDir } = r;
  const outputs = installOutputs(r.pnp);
  // A custom command builds as well as installs (`npm install && npm run build`): what it leaves
  // cannot be proven unchanged by the lock file, so it runs on every build.
  const custom = !PACKAGE_MANAGERS[r.choice.manager].install;
  // The layer's links into the app are relative: an app elsewhere beside the layers installs anew.
  const metadata = { ...r.metadata, app: appFromLayer(appDir, r.layers.pathOf(MODULES_LAYER)) };
  const layer = custom
    ? r.layers.fresh(MODULES_LAYER, { launch: true, cache: true }, metadata)
    : r.layers.get(MODULES_LAYER, { launch: true, cache: true }, metadata);
  if (custom) log.info('CC_CUSTOM_BUILD_TOOL runs on every build: its outputs are not cached');
  for (const out of r.pnp ? [] : outputs) {
    const p = path.join(appDir, out);
    if (fs.lstatSync(p, { throwIfNoEntry: false })) {
      log.warn(`${out} is part of the source: it is replaced by the installed one (list /${out} in .gitignore)`);
      fs.rmSync(p, { recursive: true, force: true });
    }
  }
  if (layer.state === 'reused') {
    const md = r.metadata;
    log.info(`dependencies reused (${layer.reason}: lock ${md.lock}, ${md.runtime}, ${md.manager}, dev dependencies ${md.dev})`);
    if (r.pnp) copyOutputs(layer.path, appDir, outputs);
    else placeModules(layer.path, appDir);
    const locks = r.layers.get(LOCKS_LAYER, { cache: true }, metadata);
    if (locks.state === 'reused') placeGeneratedLocks(locks.path, appDir);
    await runInstallScripts(r);
    writeModulesSbom(r, layer.path, true);
    return;
  }
  log.info(`installing dependencies (${layer.reason})`);
  const locks = presentLocks(appDir);
  try {
    const keys = r.sshKeys ?? [];
    if (keys.length) log.info(`git over SSH uses the private key of binding ${keys.map((k) => k.name).join(', ')} (type ssh-key), for the install only`);
    await withSshKeys(keys, (sshEnv) =>
      withRegistryAuth(
        appDir,
        r.auth,
        async (authEnv) => {
          const env = { ...r.env, ...sshEnv, ...authEnv };
          await run(r, r.command.argv, env, 'install');
          if (r.command.then) await run(r, r.command.then, env, 'install');
          const reinstall = PACKAGE_MANAGERS[r.choice.manager].install?.pruneDev?.reinstall;
          if (r.command.berryStripDev && reinstall)
            await withoutDevDependencies(appDir, r.pkg, r.log, () => run(r, reinstall.argv, { ...env, ...reinstall.env }, 'install'));
        },
        { credentialsIn: PACKAGE_MANAGERS[r.choice.manager].credentialsIn, userconfig: r.env.npm_config_userconfig },
      ),
    );
    if (r.pnp) copyOutputs(appDir, layer.path, outputs);
    else keepModules(appDir, layer.path);
    keepGeneratedLocks(appDir, locks, r.layers.get(LOCKS_LAYER, { cache: true }, metadata).path, log);
  } catch (e) {
    // A half-done install must not be cached as if it were complete.
    r.layers.remove(MODULES_LAYER);
    r.layers.remove(LOCKS_LAYER);
    throw e;
  }
  writeModulesSbom(r, layer.path, false);
}

/**
 * The modules layer's SBOM: every package installed in the layer's node_modules, with package-lock's
 * integrity digests when there is one; for Plug'n'Play, the npm packages of yarn.lock. Written at every
 * build, reused layer included.
 */
function writeModulesSbom(r: InstallRequest, layerPath: string, reused: boolean): void {
  // Plug'n'Play installs no node_modules tree: its lock file says what was installed.
  const lock = ['npm-shrinkwrap.json', 'package-lock.json'].map((f) => path.join(r.appDir, f)).find((f) => fs.existsSync(f));
  // A reused layer holds what the build that made it listed (its metadata, the lock file's digest
  // among it, is unchanged), unless the app's own install scripts, which run again, may have
  // changed node_modules: the SBOM restored with the layer spares reading every package.json again.
  const keepable = reused && !r.pnp && !INSTALL_SCRIPTS.some((s) => r.pkg.scripts?.[s]);
  const components =
    (keepable ? readSbom(r.layers.dir, MODULES_LAYER) : undefined) ??
    (r.pnp ? yarnBerryLockComponents(path.join(r.appDir, 'yarn.lock')) : nodeModulesComponents(path.join(layerPath, 'node_modules'), lock));
  writeSbom(r.layers.dir, MODULES_LAYER, components);
  r.log.detail(`SBOM: ${components.length} package(s) in ${MODULES_LAYER}.sbom.cdx.json and .spdx.json`);
}

/**
 * Yarn 2 and 3 without `workspaces focus`: a second install from the same lock file, with the
 * manifests' devDependencies removed, keeps the locked versions of the rest and drops the dev
 * dependencies from node_modules (or .pnp.cjs). The manifests and the lock file are put back as they
 * were: the project's files do not change.
 */
async function withoutDevDependencies(appDir: string, pkg: PackageJson, log: Logger, install: () => Promise<void>): Promise<void> {
  const manifests = ['package.json', ...workspaceDirs(appDir, pkg).map((d) => path.join(d, 'package.json'))].filter((f) => fs.existsSync(path.join(appDir, f)));
  const saved = new Map<string, string>();
  for (const f of [...manifests, 'yarn.lock']) {
    const file = path.join(appDir, f);
    if (fs.existsSync(file)) saved.set(file, fs.readFileSync(file, 'utf8'));
  }
  log.info(
    `Yarn before 4 has no built-in \`workspaces focus\`: development dependencies are dropped by a second install without them (${manifests.join(', ')}; put back after)`,
  );
  try {
    for (const f of manifests) {
      const file = path.join(appDir, f);
      const json = JSON.parse(saved.get(file)!) as Record<string, unknown>;
      delete json.devDependencies;
      fs.writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
    }
    await install();
  } finally {
    for (const [file, text] of saved) fs.writeFileSync(file, text);
  }
}

/** Workspace folders named by `workspaces` (`packages/*` or a folder): enough for manifests to edit. */
function workspaceDirs(appDir: string, pkg: PackageJson): string[] {
  const ws = (pkg as { workspaces?: string[] | { packages?: string[] } }).workspaces;
  const patterns = Array.isArray(ws) ? ws : (ws?.packages ?? []);
  const dirs: string[] = [];
  for (const p of patterns) {
    if (p.endsWith('/*')) {
      const parent = p.slice(0, -2);
      try {
        for (const e of fs.readdirSync(path.join(appDir, parent), { withFileTypes: true })) if (e.isDirectory()) dirs.push(path.join(parent, e.name));
      } catch {
        // no such folder
      }
    } else if (!p.includes('*')) dirs.push(p);
  }
  return dirs;
}

/**
 * Plug'n'Play's files, copied into the layer after an install and back into the new source on reuse
 * (node_modules folders move instead: modules-placement.ts). A file the source has already is kept.
 */
function copyOutputs(from: string, to: string, outputs: string[]): void {
  for (const out of outputs) {
    const src = path.join(from, out);
    if (fs.existsSync(src)) fs.cpSync(src, path.join(to, out), { recursive: true, force: false, verbatimSymlinks: true });
  }
}

/**
 * The app's own install scripts, which the package manager runs on a fresh install: each exactly
 * once (node rule 3). Run through the shell as the package manager would, not with `npm run install`,
 * which would run preinstall and postinstall a second time as its own pre/post hooks. Plug'n'Play
 * needs Yarn's own runner (its resolution hook); Yarn Berry runs no pre/post hooks.
 */
async function runInstallScripts(r: InstallRequest): Promise<void> {
  const scripts = INSTALL_SCRIPTS.filter((s) => r.pkg.scripts?.[s]);
  for (const s of scripts) {
    const script = r.pkg.scripts![s]!;
    const argv = PACKAGE_MANAGERS[r.choice.manager].runScript?.(s) ?? ['/bin/sh', '-c', script];
    const env = {
      ...r.env,
      PATH: [path.join(r.appDir, 'node_modules', '.bin'), r.env.PATH].join(':'),
      npm_lifecycle_event: s,
      npm_lifecycle_script: script,
      ...(r.pkg.name ? { npm_package_name: r.pkg.name } : {}),
      ...(r.pkg.version ? { npm_package_version: r.pkg.version } : {}),
    };
    await r.log.step(`run the app's ${s} script (${script})`, () => run(r, argv, env, s));
  }
}

async function run(r: InstallRequest, argv: string[], env: Record<string, string>, what: string): Promise<void> {
  const shown = argv[0] === '/bin/sh' ? argv[2]! : argv.join(' ');
  r.log.info(`$ ${maskSecrets(shown, env)}`);
  const res = await runStep(argv, { cwd: r.appDir, env, log: r.log, indent: '    ' });
  if (res.exitCode !== 0) {
    const tail = res.output;
    const install = what === 'install';
    const hidden = maskSecrets(shown, env);
    if (install && registryRefused(tail)) throw registryRefusedError(r.auth, r.env, hidden);
    if (install && sshRefused(tail)) throw sshRefusedError(r.sshKeys ?? [], r.bindingRoot ?? 'the bindings directory', hidden);
    const known = r.explain?.(tail);
    if (known) throw known;
    const stale = install ? PACKAGE_MANAGERS[appManager(r.choice)].staleLockfile : undefined;
    if (stale?.pattern.test(tail)) throw staleLockfileError(r.appDir, stale, hidden);
    const dev = r.command.dev === 'excluded' ? missingDevTool(r.pkg, tail) : undefined;
    if (dev) throw devToolError(r.appDir, dev, hidden, what);
    throw installFailedError(what, r.appDir, hidden, `${res.status} after ${Math.round(res.ms)}ms`);
  }
  r.log.detail(`done (${(res.ms / 1000).toFixed(1)}s)`);
}

/** The install refused a lock file that no longer matches package.json (its frozen mode). */
export function staleLockfileError(appDir: string, s: { lock: string; local: string }, shown: string): UserError {
  return new UserError({
    id: 'node/lockfile/out-of-date',
    title: `${s.lock} is out of date: it does not match package.json`,
    seen: { what: s.lock, value: 'does not match package.json', where: appDir },
    rule: `With a lock file, the build installs exactly the locked versions and never rewrites the lock file (${shown}); package.json and ${s.lock} must agree.`,
    fix: `Run \`${s.local}\` locally, commit the updated ${s.lock}, and deploy again (or delete ${s.lock} to let the build resolve versions anew).`,
    details: ['The tool said so in its output above.'],
  });
}

/** Commands whose package is named otherwise (a package named as its command needs no entry). */
const BIN_PACKAGES: Record<string, string[]> = { tsc: ['typescript'], nuxi: ['nuxt'], nuxt: ['nuxi'], ng: ['@angular/cli'], vue: ['@vue/cli'] };

/**
 * A command the script could not find (`sh: 1: nuxt: not found`) that a development dependency
 * provides: with development dependencies excluded (rule 8), it is not installed.
 */
export function missingDevTool(pkg: PackageJson, output: string): { command: string; dependency: string } | undefined {
  const dev = Object.keys(pkg.devDependencies ?? {});
  if (dev.length === 0) return undefined;
  const patterns = [/sh: (?:line )?\d+: ([^\s:]+): (?:command )?not found/g, /sh: ([^\s:]+): (?:command )?not found/g, /command not found: ([^\s]+)/g];
  for (const re of patterns) {
    for (const m of output.matchAll(re)) {
      const command = m[1]!;
      const dependency = dev.find((d) => d === command || d.split('/').pop() === command || (BIN_PACKAGES[command] ?? []).includes(d));
      if (dependency) return { command, dependency };
    }
  }
  return undefined;
}

/** A script at build ran a command of a development dependency, which was not installed. */
export function devToolError(appDir: string, dev: { command: string; dependency: string }, shown: string, what: string): UserError {
  return new UserError({
    id: 'node/dev-dependencies/needed',
    title: `\`${dev.command}\` is not installed: it comes from ${dev.dependency}, a development dependency`,
    seen: { what: what === 'install' ? 'command' : `the ${what} script`, value: shown, where: appDir },
    rule: 'Development dependencies are not installed by default (NODE_ENV=production, CC_NODE_DEV_DEPENDENCIES unset): the scripts that run at build cannot use their commands.',
    fix: `Set CC_NODE_DEV_DEPENDENCIES=install to install the development dependencies, or move ${dev.dependency} to dependencies in package.json.`,
    details: [`${dev.command}: not found (see the output above)`],
  });
}

/** The install (`what` = 'install') or one of the app's install scripts failed for another reason. */
export function installFailedError(what: string, appDir: string, shown: string, how: string): UserError {
  return new UserError({
    id: `node/${what === 'install' ? 'install' : 'install-script'}/failed`,
    title: what === 'install' ? 'Installing the dependencies failed' : `The ${what} script failed`,
    seen: { what: 'command', value: shown, where: appDir },
    rule:
      what === 'install'
        ? 'The dependencies are installed with the selected package manager (CC_NODE_BUILD_TOOL or the lock file).'
        : `Scripts ${INSTALL_SCRIPTS.join(', ')} run in the build phase and must succeed.`,
    fix: 'Read the output above: run the same command locally, fix the cause (lock file out of date, missing package, registry access), and deploy again.',
    details: [how],
  });
}
