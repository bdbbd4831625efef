/**
 * Build (contract, node rules 3–11): Node.js (and npm) at the version engines.node or
 * CC_NODE_VERSION asks for, the package manager the lock file or CC_NODE_BUILD_TOOL names, Deno if
 * mise.toml asks for it, then the dependencies, installed or reused from the cache, and the launcher.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BuildContext } from '../../../lib/cnb/context.ts';
import { operatorVariable } from '../../../lib/deps/operator.ts';
import { isUserError, UserError } from '../../../lib/errors.ts';
import { inLayers } from '../../../lib/launch/decision.ts';
import { installLaunch } from '../../../lib/launch/install.ts';
import { Logger } from '../../../lib/log.ts';
import { cacheEnv, installDependencies, modulesMetadata, PACKAGE_CACHE_LAYER, yarnLinker } from './dependencies.ts';
import type { NodeDecision } from './launch-plan.ts';
import { denoFromMise } from './mise.ts';
import { runtimesCalled, startWarnings } from './start-check.ts';
import { BUN_NODE_LAYER, bunNodeLayer } from './bun-node.ts';
import { endOfLife, nodeConstraint } from '../../../lib/js-project/node-version.ts';
import { BARE_ENTRY_FILES, bareEntryFile, missingPackageJson, NOTHING_TO_START_FIX, readPackageJson, startMethod } from './package-json.ts';
import { findIndex } from '../../../lib/app-path.ts';
import { appManager, chooseTool, type ToolChoice } from '../../../lib/js-project/build-tool.ts';
import { devDependenciesChoice, installCommand } from '../../../lib/js-project/install-command.ts';
import { lockFileOf } from '../../../lib/js-project/lock-files.ts';
import {
  DEFAULT_MANAGER,
  PACKAGE_MANAGERS,
  TOOL_LAYERS,
  toolOf,
  type InstalledManager,
  type Manager,
  type ManagerVersion,
  type ToolId,
} from '../../../lib/js-project/package-managers.ts';
import { nativeModulesEnv, npmBuildEnv } from '../../../lib/js-project/npm-env.ts';
import { parsePackageManager } from '../../../lib/js-project/package-manager-field.ts';
import { buildPathTools, managerVersion } from './package-manager.ts';
import { registryAuth } from './registry-auth.ts';
import { checkBerryLockfile, checkedInYarn, checkYarn1Fits, releaseVersion, yarnLockFormat } from './yarn-project.ts';
import { checkPnpLoader, ebadfInstallError, PNP_LAYER, pnpFilesOf, writePnpLayer, type YarnInfo } from './pnp.ts';
import semver from 'semver';
import { procfileProcesses, writeProcfileEnv } from './procfile-processes.ts';
import { bindingRoot, sshKeyBindings } from './ssh-key.ts';
import {
  installCheckedInYarn,
  installManager,
  installNode,
  installNpm,
  resolveManagerVersion,
  toolRegistryClient,
  type ManagerRequest,
  type Installed,
  type ToolEnv,
} from '../../../lib/js-project/node-tools.ts';
import { isSet, value } from '../../../lib/config/read.ts';
import { adoptForeignVariables } from '../../../lib/config/foreign.ts';
import { deferred, inParallel } from './in-parallel.ts';

/** The layers of tools a build may install beside Node.js and npm: the table's and Bun's `node`. */
const EXTRA_LAYERS = [...TOOL_LAYERS, BUN_NODE_LAYER];

/** What the build decided before downloading anything: every setting checked, the tools chosen. */
type Settings = ReturnType<typeof readSettings>;

/** The tools installed: Node.js, npm, the package manager and what is on the build PATH. */
interface Tools {
  node: Installed;
  npm: Installed;
  bins: Installed[];
  /** The managers of the table whose programs are on the build PATH. */
  managers: Manager[];
  managerVer: string;
  bun?: Installed;
}

/** bin/build (scripts/build.mjs runs it through runBuild). */
export default async function build(ctx: BuildContext): Promise<void> {
  const log = new Logger();
  // Paketo's BP_* variables that mean one of ours (lib/config/foreign.ts).
  for (const note of adoptForeignVariables(ctx.env, 'node')) log.info(note);
  const s = readSettings(ctx, log);
  const tools = await installTools(ctx, s, log);
  const { appDir } = ctx;
  const { pkg, start, choice, wanted, version } = s;
  const { node, managerVer, bun } = tools;
  const entry = PACKAGE_MANAGERS[choice.manager];
  const app = appManager(choice);
  const yarnInfo: YarnInfo | undefined = PACKAGE_MANAGERS[app].yarn === 'berry' ? { version: managerVer, because: wanted?.because ?? '' } : undefined;
  const nodeSource = version.source === 'default' ? 'the default, the latest LTS' : version.source;
  await installAppDependencies(ctx, s, tools, (output) => ebadfInstallError(output, node.version, yarnInfo, nodeSource), log);

  for (const w of startWarnings(appDir, pkg, start, app)) log.warn(w);

  // Yarn Plug'n'Play, whoever installed it (the package manager or a custom command): every node
  // process of the app preloads it (pnp.ts), and a loader that would fail on this Node.js is refused.
  const pnpFiles = pnpFilesOf(appDir);
  checkPnpLoader(pnpFiles, node.version, yarnInfo, nodeSource);
  const pnpFlags = writePnpLayer(ctx.layers, pnpFiles, node.version);
  if (pnpFlags) log.info(`Yarn Plug'n'Play: every node process of the app gets NODE_OPTIONS ${pnpFlags} (launch layer ${PNP_LAYER})`);

  const decision: NodeDecision = {
    runtime: entry.runtime?.name ?? 'node',
    node: node.version,
    ...(bun ? { bun: bun.version, bunNode: inLayers(ctx.layersDir, bunNodeLayer(ctx.layers, bun.tool.path)) } : {}),
    manager: `${app} ${managerVer}`,
    tool: choice.tool,
    ...(pnpFiles ? { pnp: true } : {}),
  };
  // The launch is planned at launch, on the runtime's own Node.js.
  const processes = procfileProcesses(appDir, start, log);
  await installLaunch(ctx, decision, { node: { path: node.tool.path, version: node.version }, processes });
  writeProcfileEnv(ctx.layers, appDir, processes);
}

/** Every setting, checked before anything is downloaded; the notes the log gives about them. */
function readSettings(ctx: BuildContext, log: Logger) {
  const { appDir, env } = ctx;
  const pkgFile = path.join(appDir, 'package.json');
  const pkg = readPackageJson(appDir);
  if (!pkg) {
    throw missingPackageJson(appDir, bareEntryFile(appDir, env) ?? findIndex(appDir, BARE_ENTRY_FILES));
  }
  const start = startMethod(pkg, env, appDir);
  if (!start) {
    throw new UserError({
      id: 'node/start/none',
      title: 'Nothing to start',
      seen: { what: 'package.json', value: 'no scripts.start, no main', where: pkgFile },
      rule: "A node application starts with CC_RUN_COMMAND, scripts.start, a Procfile's web or main.",
      fix: NOTHING_TO_START_FIX,
    });
  }

  const version = nodeConstraint(pkg, env, pkgFile);
  const pm = parsePackageManager(pkg, pkgFile);
  const choice = chooseTool(appDir, pm, env);
  // Yarn: a release checked in at yarnPath is what runs (yarn-project.ts); a Berry project left to
  // Yarn 1, or a lock file the Yarn that runs would rewrite, is refused before anything installs
  // (not for a custom command: it is the user's).
  const yarnLine = PACKAGE_MANAGERS[choice.manager].yarn;
  const release = PACKAGE_MANAGERS[appManager(choice)].yarn === 'berry' ? checkedInYarn(appDir, releaseVersion) : undefined;
  const wanted = managerVersion(choice, pm, appDir, release, pkg.engines);
  if (wanted && yarnLine === 'classic') checkYarn1Fits(choice, pm, appDir, pkg, wanted.constraint);
  const yarnOrigin = release
    ? ({ from: 'yarnPath', shown: `yarnPath ${release.file}` } as const)
    : wanted?.source === 'packageManager' && pm
      ? ({ from: 'packageManager', shown: `packageManager ${pm.name}@${pm.version}` } as const)
      : ({ from: 'default', shown: wanted?.because ?? 'default' } as const);
  const lockCheck = (yarn: string) => {
    if (yarnLine === 'berry') checkBerryLockfile(appDir, pkg, yarn, yarnOrigin);
  };
  if (wanted && semver.valid(wanted.constraint)) lockCheck(wanted.constraint);
  const dev = devDependenciesChoice(env);
  const auth = registryAuth(env);
  const bindings = bindingRoot(env, ctx.platformDir);
  const sshKeys = sshKeyBindings(bindings);
  const deno = denoFromMise(appDir);
  const nodeEnv = value(env, 'NODE_ENV')!;
  // A runtime of the table (Bun) that the app's commands call goes beside the app's manager.
  const beside = runtimesCalled(appDir, pkg, start, appManager(choice)).map((call) => ({
    call,
    version: managerVersion(
      { tool: PACKAGE_MANAGERS[call.manager].buildTools[0]!.name, manager: call.manager, because: call.where },
      pm,
      appDir,
      undefined,
      pkg.engines,
    )!,
  }));

  if (fs.existsSync(path.join(appDir, '.nvmrc'))) {
    fs.rmSync(path.join(appDir, '.nvmrc'), { force: true });
    log.info('.nvmrc is ignored and deleted: set engines.node in package.json or CC_NODE_VERSION instead');
  }

  log.info(`Node.js version "${version.constraint}" from ${version.source === 'default' ? 'the default (latest LTS)' : version.source}`);
  if (version.ignored) log.info(`CC_NODE_VERSION=${version.ignored} is ignored: engines.node in package.json takes precedence`);
  log.info(`package manager: ${choice.tool} (${choice.because})`);
  if (choice.deprecated) log.warn(choice.deprecated);
  return { pkgFile, pkg, start, version, pm, choice, wanted, lockCheck, dev, auth, bindings, sshKeys, deno, nodeEnv, beside };
}

type Task = (l: Logger) => Promise<Installed | undefined>;

/** One tool to install: its task, and the program of the table it installs (the app's manager first). */
interface Slot {
  task: Task;
  tool?: ToolId;
}

/**
 * Node.js, npm, the package manager of the app's commands, a runtime they call beside it (Bun), the
 * tools on the build PATH and Deno, installed at the same time (the log keeps this order); the
 * layers of tools no longer used removed; the Yarn lock check once its version is known.
 */
async function installTools(ctx: BuildContext, s: Settings, log: Logger): Promise<Tools> {
  const { appDir, env } = ctx;
  const { pm, choice, wanted, lockCheck, deno, version } = s;
  const tools: ToolEnv = { layers: ctx.layers, env, log, npm: toolRegistryClient(env, log) };
  // The default Yarn against a Berry yarn.lock: its version is resolved first, so that a lock file it
  // would rewrite is refused before any download (not for the operator's own Yarn: nothing is fetched).
  let lockChecked = Boolean(wanted && semver.valid(wanted.constraint));
  const app = appManager(choice);
  const entry = PACKAGE_MANAGERS[app];
  // The manager of the app's commands, installed for the install or a custom command (not npm: it comes with Node.js).
  const own = wanted && entry.tool && !entry.bundled ? (app as InstalledManager) : undefined;
  const berryLock = PACKAGE_MANAGERS[choice.manager].yarn === 'berry' && yarnLockFormat(appDir)?.berry;
  if (own && !lockChecked && berryLock && !isSet(env, operatorVariable(entry.tool!.id))) {
    lockCheck(await resolveManagerVersion(tools, managerRequest(own, wanted!, s.pkgFile)));
    lockChecked = true;
  }
  // npm waits only for Node.js's version, known before its download.
  const nodeVersion = deferred<string>();
  const slots: Slot[] = [
    {
      task: async (l) => {
        try {
          const node = await l.step('Node.js', () => installNode({ ...tools, log: l }, version.constraint, version.origin, nodeVersion.resolve));
          l.info(`Node.js ${node.version} (asked: "${version.constraint}" from ${version.source})`);
          const eol = endOfLife(node.version);
          if (eol.eol) l.warn(`Node.js ${node.version} is end-of-life since ${eol.end}: it gets no security fixes; move to 24 (the latest LTS)`);
          return node;
        } catch (e) {
          nodeVersion.reject(e);
          throw e;
        }
      },
    },
    {
      task: async (l) => {
        const v = await nodeVersion.promise;
        const npm = await l.step('npm', () => installNpm({ ...tools, log: l }, v));
        l.info(`npm ${npm.version} (${npm.tool.source === 'operator' ? 'provided by the operator' : `bundled with Node.js ${v}`})`);
        return npm;
      },
    },
    ...(own ? [{ task: managerTask(tools, own, wanted!, s.pkgFile, custom(choice)), tool: own }] : []),
    ...s.beside.map(({ call, version: v }) => {
      const note = `; beside ${app}: ${call.where} calls ${call.runtime.name} (\`${call.command}\`), on PATH at build and launch`;
      return { task: managerTask(tools, call.manager as InstalledManager, v, s.pkgFile, note), tool: call.manager as InstalledManager };
    }),
    ...buildPathTools(choice, pm, s.pkg.engines).map((extra) => ({ task: buildPathTask(tools, extra), tool: extra.id })),
  ];
  if (deno) {
    slots.push({
      task: async (l) => {
        const d = await l.step('Deno', () =>
          installManager({ ...tools, log: l }, { id: 'deno', constraint: deno.constraint, origin: { what: '[tools] deno', where: deno.file } }),
        );
        l.info(`Deno ${d.version} (${deno.file}: deno = "${deno.constraint}")`);
        return d;
      },
      tool: 'deno',
    });
  }
  const tasks = slots.map((x) => x.task);
  const installed = await inParallel(log, tasks);
  const [node, npm] = [installed[0]!, installed[1]!];
  const done = slots.flatMap((slot, i) => (installed[i] ? [{ ...slot, m: installed[i] }] : []));
  const managers = [DEFAULT_MANAGER, ...done.flatMap((x) => (x.tool && x.tool !== 'deno' ? [x.tool] : []))];
  const used = new Set(done.flatMap((x) => (x.tool ? [toolOf(x.tool).layer] : [])));
  const managerVer = own ? installed[2]!.version : npm.version;
  // The manager that is the app's runtime too (Bun), when it installs: a custom command's Bun is one of its tools.
  const bun = own && PACKAGE_MANAGERS[choice.manager].runtime ? installed[2] : undefined;
  for (const l of EXTRA_LAYERS) if (!used.has(l) && fs.existsSync(path.join(ctx.layersDir, `${l}.toml`))) ctx.layers.remove(l);
  // Otherwise the Yarn's version is known once installed: its lock check comes now, still before the install.
  if (wanted && !lockChecked) lockCheck(managerVer);
  return { node, npm, bins: done.map((x) => x.m), managers, managerVer, ...(bun ? { bun } : {}) };
}

/** What installManager is asked for the version `wanted` (its engines range, its packageManager hash). */
function managerRequest(id: InstalledManager, wanted: ManagerVersion, pkgFile: string): ManagerRequest {
  return {
    id,
    constraint: wanted.constraint,
    origin: { what: wanted.engines?.field ?? (wanted.source === 'packageManager' ? 'packageManager' : id), where: pkgFile },
    ...(wanted.hash ? { hash: wanted.hash } : {}),
    ...(wanted.engines ? { engines: wanted.engines } : {}),
  };
}

/** A manager at build and launch: the app's (for the install, or a custom command's), or a runtime its commands call beside it (Bun). */
function managerTask(tools: ToolEnv, id: InstalledManager, wanted: ManagerVersion, pkgFile: string, note: string): Task {
  const checkedIn = wanted.release;
  return async (l) => {
    const m = await l.step(id, async () =>
      checkedIn
        ? installCheckedInYarn({ ...tools, log: l }, checkedIn, PACKAGE_MANAGERS[id].tool!)
        : installManager({ ...tools, log: l }, managerRequest(id, wanted, pkgFile)),
    );
    l.info(`${id} ${m.version} (${wanted.because})${note}`);
    return m;
  };
}

/** What the log adds about a custom command's manager. */
function custom(choice: ToolChoice): string {
  return choice.app ? `; for CC_CUSTOM_BUILD_TOOL (${choice.app.because}), on PATH at build and launch` : '';
}

/**
 * Node rule 7: Yarn is on the build PATH in every build (the packageManager version, else the
 * system default 1.22.22). It serves the app's own commands, not the install: one that cannot be had
 * (an offline build machine) is a warning, and the command that needs it says so itself.
 */
function buildPathTask(tools: ToolEnv, extra: ReturnType<typeof buildPathTools>[number]): Task {
  const { env } = tools;
  const toolId = PACKAGE_MANAGERS[extra.id].tool!.id;
  return async (l) => {
    // A build image that brings its own tools (RBP_TOOL_NODE) builds offline: nothing is fetched beside them.
    if (isSet(env, operatorVariable('node')) && !isSet(env, operatorVariable(toolId))) {
      l.info(`${toolId} is not on the build PATH: the operator provides the tools (${operatorVariable('node')}) and no ${operatorVariable(toolId)}`);
      return undefined;
    }
    try {
      const m = await l.step(extra.id, () => installManager({ ...tools, log: l }, { ...extra, types: { build: true, launch: false } }));
      l.info(`${extra.id} ${m.version} on the build PATH (${extra.because})`);
      return m;
    } catch (e) {
      if (isUserError(e) && e.id === 'node/package-manager/hash-mismatch') throw e;
      l.warn(`${toolId} is not on the build PATH: it could not be installed (${(e as Error).message.split('\n')[0]})`);
      return undefined;
    }
  };
}

/** The app's dependencies, installed (or reused) by the package manager with the build's settings. */
async function installAppDependencies(ctx: BuildContext, s: Settings, t: Tools, explain: (output: string) => UserError | undefined, log: Logger) {
  const { appDir, env } = ctx;
  const { pkg, choice, dev, nodeEnv, auth, sshKeys, bindings } = s;
  const { node, npm, bins, managers, managerVer, bun } = t;
  const entry = PACKAGE_MANAGERS[choice.manager];
  const app = PACKAGE_MANAGERS[appManager(choice)];
  const pnp = entry.yarn === 'berry' && yarnLinker(appDir, env) === 'pnp';
  const cache = ctx.layers.get(PACKAGE_CACHE_LAYER, { cache: true }, { manager: choice.manager });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-node-'));
  const userconfig = path.join(tmp, 'npmrc');
  fs.writeFileSync(userconfig, '');
  // With its lock file, a manager installs in its frozen mode (npm's has none: `npm ci` is its own build tool).
  const locked = Boolean(lockFileOf(appDir, choice.manager));
  const command = installCommand(choice, {
    dev: { choice: dev, nodeEnv },
    locked,
    unattended: true,
    ...(entry.install?.pruneDev ? { berryMajor: Number(managerVer.split('.')[0]) } : {}),
    onPath: managers,
  });
  log.info(`development dependencies: ${command.dev} (CC_NODE_DEV_DEPENDENCIES ${dev === 'unset' ? 'unset' : `=${dev}`}, NODE_ENV=${nodeEnv})`);
  if (command.env) {
    const vars = Object.entries(command.env).map(([k, v]) => `${k}=${v}`);
    log.info(`CC_CUSTOM_BUILD_TOOL's installs include them whatever NODE_ENV is: ${vars.join(' ')}`);
  }
  const native = nativeModulesEnv(node.tool.path, npm.tool.path);
  if (native.nodedir)
    log.detail(
      `native modules: node-gyp compiles against the headers of Node.js ${node.version} (npm_config_nodedir=${native.nodedir}), nothing is downloaded`,
    );
  const installEnv: Record<string, string> = {
    ...env,
    PATH: [...new Set(bins.map((b) => b.binDir)), ...native.path, env.PATH ?? '/usr/local/bin:/usr/bin:/bin'].join(':'),
    NODE_ENV: nodeEnv,
    ...npmBuildEnv(userconfig),
    ...native.env,
    ...app.installEnv,
    ...command.env,
    ...cacheEnv(cache.path, choice, env, app.yarn === 'berry' && yarnLinker(appDir, env) === 'pnp'),
  };
  try {
    await installDependencies({
      layers: ctx.layers,
      appDir,
      pkg,
      choice,
      metadata: modulesMetadata({
        appDir,
        pkg,
        choice,
        managerVersion: managerVer,
        runtime: bun ? `bun ${bun.version} node ${node.version}` : `node ${node.version}`,
        dev,
        nodeEnv,
        registry: new URL(auth.registry).host,
        ...(choice.command ? { custom: choice.command } : {}),
      }),
      command,
      pnp,
      explain,
      env: installEnv,
      auth,
      sshKeys,
      bindingRoot: bindings,
      log,
    });
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
