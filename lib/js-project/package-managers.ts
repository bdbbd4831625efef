/**
 * The package managers of a JavaScript project (contract, node rules 4–8), one typed entry each, as
 * Heroku's nodejs buildpacks keep theirs: an entry says everything the buildpacks decide about its
 * manager (PackageManager below). Code elsewhere reads these facts and never switches on a
 * manager's name: adding a manager is adding an entry here (package-managers.test.ts walks every
 * entry). install-command.ts adds the flags of each situation; which manager a project uses is
 * lock-files.ts's and build-tool.ts's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { value } from '../config/read.ts';
import type { NODE_BUILD_TOOLS } from '../config/variables.ts';
import { bunPackage, denoPackage } from '../deps/npm-packages.ts';

/** The values CC_NODE_BUILD_TOOL accepts (lib/config/variables.ts declares them; each is one entry's below). */
export type BuildTool = (typeof NODE_BUILD_TOOLS)[number];

/** The lock files the managers read. */
export const LOCK_FILES = {
  yarn: 'yarn.lock',
  pnpm: 'pnpm-lock.yaml',
  bun: 'bun.lock',
  bunBinary: 'bun.lockb',
  npm: 'package-lock.json',
  npmShrinkwrap: 'npm-shrinkwrap.json',
} as const;

/** The program that installs: npm for npm/npm-install/npm-ci, Yarn 1 for `yarn`, Berry for yarn-berry and yarn2. */
export type Manager = 'npm' | 'pnpm' | 'yarn' | 'yarn-berry' | 'bun' | 'custom';

/** The names the packageManager field of package.json may give (package-manager-field.ts parses it). */
export type FieldName = 'npm' | 'pnpm' | 'yarn' | 'bun';

/** The `packageManager` field of package.json, as corepack writes it: `<name>@<exact version>`, optionally `+<algorithm>.<hex>`. */
export interface PackageManagerField {
  name: FieldName;
  version: string;
  hash?: { algorithm: string; hex: string };
}

/** A Yarn release checked in at yarnPath (node's yarn-project.ts finds it): it runs instead of any installed Yarn. */
export interface CheckedInYarn {
  /** As .yarnrc.yml writes it (relative to the app). */
  file: string;
  /** Its absolute path in the app. */
  abs: string;
  version: string;
}

/**
 * Where a package manager takes the credential lines from (node's registry-auth.ts writes them
 * there). npm, Yarn 1 and Bun expand `${VAR}` in the project's `.npmrc`. pnpm (10.34 and later)
 * refuses to expand a variable in credentials that come from a project `.npmrc` (a committed file
 * could send them to a registry of an attacker's choosing) and takes them from the user-level npmrc
 * instead: the build's own `npm_config_userconfig`, a file in a private temp folder outside the app.
 * Yarn Berry reads no npmrc at all.
 */
export type CredentialsIn = 'project-npmrc' | 'user-npmrc' | 'environment';

/** A manager's install command (install-command.ts adds the flags each situation asks for). */
export interface InstallRow {
  argv: string[];
  /** CC_NODE_DEV_DEPENDENCIES=install (node rule 8's table). */
  includeDev: string[];
  /**
   * What includeDev does, as variables, for installs the build does not write (CC_CUSTOM_BUILD_TOOL):
   * they include development dependencies whatever NODE_ENV is. None where NODE_ENV never excludes them.
   */
  includeDevEnv?: Record<string, string>;
  /** Dev dependencies left out: with NODE_ENV=production (pnpm), or always unless asked for (Bun). */
  omitDev?: { flags: string[]; when: 'production' | 'always' };
  /** Its frozen mode: with a lock file, the install follows it and fails when it is out of date. */
  locked: string[];
  unattendedBefore?: string[];
  unattendedAfter?: string[];
  /**
   * A manager with no flag that leaves dev dependencies out (Yarn Berry) installs everything, then
   * prunes them: with `focus` from version `fromMajor` on, before it by a second install of manifests
   * without devDependencies (`reinstall`, node's dependencies.ts).
   */
  pruneDev?: { focus: string[]; fromMajor: number; reinstall: { argv: string[]; env: Record<string, string> } };
}

/** A value of CC_NODE_BUILD_TOOL that chooses the entry. */
export interface BuildToolRow {
  name: BuildTool;
  /** The warning of a deprecated value (the contract's Yarn 1.x and 2.x). */
  deprecated?: string;
  /** When a lock file picks the entry: the packageManager major versions this value stands for (Yarn 2 for yarn2). */
  forMajor?: (major: number) => boolean;
  /** Its own install command (npm ci), instead of the entry's. */
  install?: InstallRow;
}

/** Where a manager's program comes from: an npm package of the tool registry (lib/deps), into a layer. */
export interface ToolPackage {
  /** The npm package that holds the program (Bun's and Deno's are per architecture). */
  pkg: () => string;
  /** Its id: in the layer's metadata, RBP_TOOL_<ID>, the SBOM and corepack's commands (Yarn 1 and Berry are both `yarn`). */
  id: string;
  /** The build's tool layer that holds it (Yarn 1 and Berry share `yarn`). */
  layer: string;
  /** The command it is run as, on PATH. */
  command: string;
  /** The program inside the package, by version. */
  bin: (version: string) => string;
  /** A packageManager hash covers this file of the package (Yarn ≥ 2's yarn.js); else the package tarball. */
  hashedFile?: string;
}

/** What a build knows when it asks a manager for its version. */
export interface VersionQuery {
  tool: BuildTool;
  pm: PackageManagerField | undefined;
  appDir?: string;
  /** Yarn Berry: the release checked in at yarnPath. */
  release?: CheckedInYarn;
}

export interface ManagerVersion {
  constraint: string;
  because: string;
  /** Where it comes from: the ones the app names exactly (packageManager, yarnPath) come before an engines range. */
  source: 'packageManager' | 'yarnPath' | 'engines' | 'lockfile' | 'default';
  /** From an engines range: its field, the manager's line in messages, and the releases of that line it may pick (Yarn 1's engines.yarn picks no Berry). */
  engines?: { field: string; label: string; accept: (version: string) => boolean };
  hash?: PackageManagerField['hash'];
  /** Yarn Berry: the release checked in at yarnPath, which runs instead of any installed Yarn. */
  release?: CheckedInYarn;
}

/** A manager that is the app's runtime too (node rule 4: Bun): what launches the app and the commands that need it installed. */
export interface AppRuntime {
  name: 'bun';
  /** Its name in messages. */
  label: string;
  /** The commands of the runtime a start command may call. */
  commands: string[];
  /** Its words that run a package.json script, not a file (`bun run x`, `bun start`). */
  scriptWords: string[];
  /** scripts.start run by the runtime itself, pre- and poststart included. */
  startScript: string[];
}

export interface PackageManager {
  /** The CC_NODE_BUILD_TOOL values that choose it; the first is the one its lock file picks. */
  buildTools: readonly BuildToolRow[];
  /** The name the packageManager field gives it, and the versions of that name it stands for. */
  field?: { name: FieldName; takes: (major: number) => boolean };
  /**
   * Node rule 5: its lock file at the root picks it, lowest rank first. A lock file two entries
   * read (yarn.lock) goes to the one packageManager names, else to the entry that ranks.
   */
  lockRank?: number;
  /** Its lock files, in the order it looks for them: the first present is followed, and its digest keys the dependency cache. */
  lockFiles: readonly string[];
  /** Its version (contract, node rule 7): packageManager, else a default; none for npm (it comes with Node.js) and custom. */
  version?: (q: VersionQuery) => ManagerVersion;
  /** Its program; `bundled`: it comes with Node.js (npm), never installed on its own. */
  tool?: ToolPackage;
  bundled?: boolean;
  /** Node rule 7: on the build PATH of every build, whatever installs (Yarn: the packageManager version, else this default). */
  onEveryBuildPath?: { origin: string };
  /** Its install command (none for a custom one: CC_CUSTOM_BUILD_TOOL is the command). */
  install?: InstallRow;
  /** How a shell runs one of the app's package.json scripts with it. */
  run?: string[];
  /**
   * How the build runs one of the app's install scripts (preinstall, postinstall…): Yarn Berry runs
   * it itself (its PnP environment); the others as npm does, the script in sh.
   */
  runScript?: (name: string) => string[];
  /** Variables its install needs whatever the project. */
  installEnv?: Record<string, string>;
  /** Its own download cache inside the package-cache layer (node's dependencies.ts sets it). */
  cacheEnv?: (cacheDir: string, o: { pnp: boolean; env: Record<string, string | undefined> }) => Record<string, string>;
  /** Its cache is set whichever manager installs: the app's scripts may call it (npm, Bun). */
  cacheInEveryBuild?: boolean;
  /** What its frozen install prints when the lock file no longer matches package.json, and the command that updates it. */
  staleLockfile?: { pattern: RegExp; lock: string; local: string };
  credentialsIn: CredentialsIn;
  /** The static buildpack installs with corepack, which runs the version packageManager names (pnpm and Yarn). */
  corepack?: boolean;
  /** Yarn's line: classic (1.x, refused on a Berry project) or Berry (a yarnPath release, Plug'n'Play, its lock format). */
  yarn?: 'classic' | 'berry';
  /** A release checked in at yarnPath takes over from it: the project installs as that manager. */
  yarnPathRunsAs?: Manager;
  /** It is the app's runtime too (node rule 4). */
  runtime?: AppRuntime;
}

export const DEFAULT_YARN1_VERSION = '1.22.22';
/** Contract: "the latest packaged 4.x Yarn" with yarn-berry. */
export const DEFAULT_YARN_BERRY_RANGE = '4';
export const DEFAULT_YARN2_RANGE = '2';
/** pnpm 12's package needs its install script to swap in the native binary; 10.x runs on every supported Node. */
export const DEFAULT_PNPM_RANGE = '10';
/** Contract, "Versioning": Bun, latest available, 1.3.14. */
export const DEFAULT_BUN_VERSION = '1.3.14';

export function yarnDeprecation(version: '1.x' | '2.x'): string {
  return `Yarn ${version} is deprecated on this platform: move to Yarn 4 (set "packageManager": "yarn@4.x.y" in package.json, or CC_NODE_BUILD_TOOL=yarn-berry)`;
}

/**
 * The pnpm major that writes a lockfileVersion (pnpm's own table): without packageManager, the lock
 * file says which pnpm made it, and a newer major would rewrite it and resolve anew.
 */
export function pnpmForLockfile(lockfileVersion: string | undefined): ManagerVersion | undefined {
  const v = lockfileVersion?.trim().replace(/^['"]|['"]$/g, '');
  if (!v) return undefined;
  const major = Number(v.split('.')[0]);
  const range = v === '5.3' ? '6' : major === 5 ? '7' : major === 6 ? '8' : undefined; // 9.0: pnpm 9 and 10, the default
  if (!range) return undefined;
  return { constraint: range, because: `pnpm-lock.yaml lockfileVersion ${v}: latest pnpm ${range}.x`, source: 'lockfile' };
}

/** `lockfileVersion` of a pnpm-lock.yaml, read without parsing the whole file. */
export function pnpmLockfileVersion(appDir: string): string | undefined {
  try {
    const head = fs.readFileSync(path.join(appDir, LOCK_FILES.pnpm), 'utf8').slice(0, 512);
    return /^lockfileVersion:\s*['"]?([0-9.]+)['"]?/m.exec(head)?.[1];
  } catch {
    return undefined;
  }
}

/** The version packageManager gives, when it names `name`. */
function fromField(pm: PackageManagerField | undefined, name: FieldName): ManagerVersion | undefined {
  return pm?.name === name
    ? { constraint: pm.version, because: `packageManager ${pm.name}@${pm.version}`, source: 'packageManager', ...(pm.hash ? { hash: pm.hash } : {}) }
    : undefined;
}

/** A program from the npm package `pkg` (a function when it depends on the architecture), named `id` everywhere. */
const npmRegistryTool = (id: string, pkg: string | (() => string), bin: string | ((v: string) => string), extra: Partial<ToolPackage> = {}): ToolPackage => ({
  pkg: typeof pkg === 'string' ? () => pkg : pkg,
  id,
  layer: id,
  command: id,
  bin: typeof bin === 'string' ? () => bin : bin,
  ...extra,
});

export const PACKAGE_MANAGERS: Record<Manager, PackageManager> = {
  npm: {
    buildTools: [
      { name: 'npm' },
      { name: 'npm-install' },
      // `npm ci` (CC_NODE_BUILD_TOOL=npm-ci): npm's clean install, the lock file followed exactly.
      { name: 'npm-ci', install: { argv: ['npm', 'ci'], includeDev: ['--include=dev'], locked: [], unattendedAfter: ['--no-audit', '--no-fund'] } },
    ],
    field: { name: 'npm', takes: () => true },
    lockFiles: [LOCK_FILES.npmShrinkwrap, LOCK_FILES.npm],
    tool: npmRegistryTool('npm', 'npm', 'bin/npm-cli.js'),
    bundled: true,
    install: {
      argv: ['npm', 'install'],
      includeDev: ['--production=false'],
      includeDevEnv: { npm_config_include: 'dev' },
      locked: [],
      unattendedAfter: ['--no-audit', '--no-fund'],
    },
    run: ['npm', 'run'],
    cacheEnv: (dir) => ({ npm_config_cache: path.join(dir, 'npm') }),
    cacheInEveryBuild: true,
    credentialsIn: 'project-npmrc',
  },
  pnpm: {
    buildTools: [{ name: 'pnpm' }],
    field: { name: 'pnpm', takes: () => true },
    lockRank: 2,
    lockFiles: [LOCK_FILES.pnpm],
    // packageManager, else the pnpm that wrote the lock file, else the default.
    version: ({ pm, appDir }) =>
      fromField(pm, 'pnpm') ??
      (appDir ? pnpmForLockfile(pnpmLockfileVersion(appDir)) : undefined) ?? {
        constraint: DEFAULT_PNPM_RANGE,
        because: 'default (no packageManager pnpm@…): latest pnpm 10.x',
        source: 'default',
      },
    tool: npmRegistryTool(
      'pnpm',
      'pnpm',
      // v is the exact version installed; a plain parse, so that detect (which reads this table) needs no semver.
      (v) => (Number.parseInt(v, 10) >= 11 ? 'bin/pnpm.mjs' : 'bin/pnpm.cjs'),
    ),
    install: {
      argv: ['pnpm', 'install'],
      includeDev: ['--prod', 'false'],
      // pnpm before 10 leaves them out with NODE_ENV=production; it reads its `production` setting from npm's variables.
      includeDevEnv: { npm_config_production: 'false' },
      omitDev: { flags: ['--prod'], when: 'production' },
      locked: ['--frozen-lockfile'],
    },
    run: ['pnpm', 'run'],
    // pnpm refuses to run when packageManager names another manager (or version): the build chose it.
    installEnv: { npm_config_package_manager_strict: 'false' },
    cacheEnv: (dir) => ({ npm_config_store_dir: path.join(dir, 'pnpm-store') }),
    staleLockfile: {
      pattern: /ERR_PNPM_OUTDATED_LOCKFILE|ERR_PNPM_LOCKFILE_CONFIG_MISMATCH|lockfile needs updates/i,
      lock: LOCK_FILES.pnpm,
      local: 'pnpm install',
    },
    credentialsIn: 'user-npmrc',
    corepack: true,
  },
  yarn: {
    buildTools: [{ name: 'yarn', deprecated: yarnDeprecation('1.x') }],
    field: { name: 'yarn', takes: (major) => major < 2 },
    // Rule 5 as the contract states it: yarn.lock without packageManager yarn@2 or later is Yarn 1.x.
    lockRank: 1,
    lockFiles: [LOCK_FILES.yarn],
    version: ({ pm }) => {
      const f = fromField(pm, 'yarn');
      return f?.constraint.startsWith('1.') ? f : { constraint: DEFAULT_YARN1_VERSION, because: 'system default Yarn 1.22.22', source: 'default' };
    },
    tool: npmRegistryTool('yarn', 'yarn', 'bin/yarn.js'),
    onEveryBuildPath: { origin: 'the system default Yarn' },
    install: {
      argv: ['yarn', 'install'],
      includeDev: ['--production=false'],
      // Yarn 1 leaves them out with NODE_ENV=production unless YARN_PRODUCTION (or NPM_CONFIG_PRODUCTION) is false.
      includeDevEnv: { YARN_PRODUCTION: 'false' },
      locked: ['--frozen-lockfile'],
      unattendedBefore: ['--non-interactive'],
    },
    run: ['yarn', 'run'],
    cacheEnv: (dir) => ({ YARN_CACHE_FOLDER: path.join(dir, 'yarn') }),
    staleLockfile: { pattern: /Your lockfile needs to be updated/i, lock: LOCK_FILES.yarn, local: 'yarn install' },
    credentialsIn: 'project-npmrc',
    corepack: true,
    yarn: 'classic',
    yarnPathRunsAs: 'yarn-berry',
  },
  'yarn-berry': {
    buildTools: [{ name: 'yarn-berry' }, { name: 'yarn2', deprecated: yarnDeprecation('2.x'), forMajor: (major) => major === 2 }],
    field: { name: 'yarn', takes: (major) => major >= 2 },
    lockFiles: [LOCK_FILES.yarn],
    // A release checked in at yarnPath runs whatever else is asked (every Yarn hands over to it), then packageManager, then the default.
    version: ({ tool, pm, release }) => {
      const f = fromField(pm, 'yarn');
      if (release) {
        const ignored = f && f.constraint !== release.version ? `; packageManager yarn@${f.constraint} does not run: any Yarn hands over to yarnPath` : '';
        return {
          constraint: release.version,
          because: `yarnPath ${release.file} in .yarnrc.yml: the release checked in runs, not looked up in the registry${ignored}`,
          source: 'yarnPath',
          release,
        };
      }
      if (f && !f.constraint.startsWith('1.')) return f;
      return tool === 'yarn2'
        ? { constraint: DEFAULT_YARN2_RANGE, because: 'CC_NODE_BUILD_TOOL=yarn2: latest Yarn 2.x', source: 'default' }
        : { constraint: DEFAULT_YARN_BERRY_RANGE, because: 'latest packaged Yarn 4.x', source: 'default' };
    },
    tool: npmRegistryTool('yarn', '@yarnpkg/cli-dist', 'bin/yarn.js', { hashedFile: 'bin/yarn.js' }),
    install: {
      // Berry refuses --production: it installs everything, then drops dev dependencies. Yarn 4
      // focuses (built in); 2 and 3 need the workspace-tools plugin for that, so install again.
      argv: ['yarn', 'install'],
      includeDev: [],
      locked: ['--immutable'],
      pruneDev: {
        focus: ['yarn', 'workspaces', 'focus', '--all', '--production'],
        fromMajor: 4,
        reinstall: { argv: ['yarn', 'install'], env: { YARN_ENABLE_IMMUTABLE_INSTALLS: 'false' } },
      },
    },
    run: ['yarn', 'run'],
    runScript: (name) => ['yarn', 'run', name],
    // Plug'n'Play points at its zip archives: they must sit in the app (.yarn/cache), not in a global cache.
    cacheEnv: (dir, { pnp }) => ({ ...(pnp ? { YARN_ENABLE_GLOBAL_CACHE: 'false' } : {}), YARN_GLOBAL_FOLDER: path.join(dir, 'yarn-berry') }),
    staleLockfile: { pattern: /YN0028|lockfile would have been modified/i, lock: LOCK_FILES.yarn, local: 'yarn install' },
    credentialsIn: 'environment',
    corepack: true,
    yarn: 'berry',
  },
  bun: {
    buildTools: [{ name: 'bun' }],
    field: { name: 'bun', takes: () => true },
    lockRank: 3,
    lockFiles: [LOCK_FILES.bun, LOCK_FILES.bunBinary],
    version: ({ pm }) => fromField(pm, 'bun') ?? { constraint: DEFAULT_BUN_VERSION, because: 'latest available Bun', source: 'default' },
    tool: npmRegistryTool('bun', bunPackage, 'bin/bun'),
    install: { argv: ['bun', 'install'], includeDev: [], omitDev: { flags: ['--omit', 'dev'], when: 'always' }, locked: ['--frozen-lockfile'] },
    run: ['bun', 'run'],
    // Contract: CC_BUN_INSTALL_CACHE_DIR, else in the package-cache layer.
    cacheEnv: (dir, { env }) => ({ BUN_INSTALL_CACHE_DIR: value(env, 'CC_BUN_INSTALL_CACHE_DIR') ?? path.join(dir, 'bun') }),
    cacheInEveryBuild: true,
    staleLockfile: { pattern: /lockfile had changes, but lockfile is frozen/i, lock: LOCK_FILES.bun, local: 'bun install' },
    credentialsIn: 'project-npmrc',
    // Node rule 4: Bun is the runtime too; `bun --bun run start` runs prestart, start and poststart itself, with `node` in the scripts meaning Bun.
    runtime: { name: 'bun', label: 'Bun', commands: ['bun', 'bunx'], scriptWords: ['run', 'start'], startScript: ['bun', '--bun', 'run', 'start'] },
  },
  // CC_CUSTOM_BUILD_TOOL: a command of the user's, npm-like; any lock file keys the cache.
  custom: { buildTools: [{ name: 'custom' }], lockFiles: [LOCK_FILES.npm, LOCK_FILES.yarn, LOCK_FILES.pnpm, LOCK_FILES.bun], credentialsIn: 'project-npmrc' },
};

/** Every manager, in the table's order. */
export const MANAGERS = Object.keys(PACKAGE_MANAGERS) as Manager[];

/** The manager of a project no lock file and no CC_NODE_BUILD_TOOL decides (node rule 4). */
export const DEFAULT_MANAGER: Manager = 'npm';

/** Managers whose program the build installs from the tool registry (not npm: it comes with Node.js). */
export type InstalledManager = Exclude<Manager, 'npm' | 'custom'>;

/** Programs installed like a manager that no lock file chooses: Deno, when mise.toml asks for it (node rule 11). */
export const OTHER_TOOLS = {
  deno: npmRegistryTool('deno', denoPackage, 'deno'),
} satisfies Record<string, ToolPackage>;

/** What node-tools.ts installs by id: a manager's program, or one of OTHER_TOOLS. */
export type ToolId = InstalledManager | keyof typeof OTHER_TOOLS;

export function toolOf(id: ToolId): ToolPackage {
  return id in OTHER_TOOLS ? OTHER_TOOLS[id as keyof typeof OTHER_TOOLS] : PACKAGE_MANAGERS[id as Manager].tool!;
}

/** Every tool layer a build may write, for the clean-up of the ones a build no longer uses (npm's aside: always there). */
export const TOOL_LAYERS: readonly string[] = [
  ...new Set([
    ...MANAGERS.flatMap((m) => (PACKAGE_MANAGERS[m].tool && !PACKAGE_MANAGERS[m].bundled ? [PACKAGE_MANAGERS[m].tool.layer] : [])),
    ...Object.values(OTHER_TOOLS).map((t) => t.layer),
  ]),
];

/** The manager a CC_NODE_BUILD_TOOL value chooses, and its row. */
export function managerOfTool(tool: BuildTool): { manager: Manager; row: BuildToolRow } {
  for (const manager of MANAGERS) {
    const row = PACKAGE_MANAGERS[manager].buildTools.find((t) => t.name === tool);
    if (row) return { manager, row };
  }
  throw new Error(`CC_NODE_BUILD_TOOL=${tool} is in no entry of PACKAGE_MANAGERS`);
}

/** The manager a packageManager field names (its name, and for Yarn its major: 1.x is classic, later Berry). */
export function managerNamedBy(pm: PackageManagerField | undefined): Manager | undefined {
  if (!pm) return undefined;
  const major = Number(pm.version.split('.')[0]);
  return MANAGERS.find((m) => PACKAGE_MANAGERS[m].field?.name === pm.name && PACKAGE_MANAGERS[m].field.takes(major));
}

/** Whether packageManager names `manager`'s program (any version of it: Yarn 1 and Berry are both `yarn`). */
export function fieldNames(pm: PackageManagerField | undefined, manager: Manager): boolean {
  return pm !== undefined && PACKAGE_MANAGERS[manager].field?.name === pm.name;
}

/**
 * The command that installs with `manager` and then runs the app's build script, in its frozen mode
 * when the app has its lock file: what a fix suggests the app run at build (CC_CUSTOM_BUILD_TOOL).
 */
export function buildCommandExample(manager: Manager, locked: boolean): string {
  const e = PACKAGE_MANAGERS[manager].install ? PACKAGE_MANAGERS[manager] : PACKAGE_MANAGERS[DEFAULT_MANAGER];
  const own = e.install!;
  // npm's frozen mode is a build tool of its own (npm ci).
  const row = locked && own.locked.length === 0 ? (e.buildTools.find((t) => t.install)?.install ?? own) : own;
  return `${[...row.argv, ...(locked ? row.locked : [])].join(' ')} && ${[...e.run!, 'build'].join(' ')}`;
}

/** The entry that is an app runtime by that name (Bun), if any. */
export function appRuntime(name: string): AppRuntime | undefined {
  return MANAGERS.map((m) => PACKAGE_MANAGERS[m].runtime).find((r) => r?.name === name);
}
