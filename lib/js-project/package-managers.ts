/**
 * The package managers of a JavaScript project (contract, node rules 4–8), one typed entry each, as
 * Heroku's nodejs buildpacks keep theirs: the lock files each follows, where it keeps its download
 * cache, what its frozen install prints when the lock file is out of date, where it reads registry
 * credentials, its install command and how it runs the app's scripts, and the tool layer that holds
 * it. install-command.ts adds the flags of each situation (and npm ci's own row); which manager a
 * project uses is lock-files.ts's and build-tool.ts's.
 */
import path from 'node:path';

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
  /** Dev dependencies left out: with NODE_ENV=production (pnpm), or always unless asked for (Bun). */
  omitDev?: { flags: string[]; when: 'production' | 'always' };
  /** Its frozen mode: with a lock file, the install follows it and fails when it is out of date. */
  locked: string[];
  unattendedBefore?: string[];
  unattendedAfter?: string[];
}

export interface PackageManager {
  /** Its install command (none for a custom one: CC_CUSTOM_BUILD_TOOL is the command). */
  install?: InstallRow;
  /**
   * How it runs one of the app's scripts at build (preinstall, postinstall…): Yarn Berry runs it
   * itself (its PnP environment); the others as npm does, the script in sh.
   */
  runScript?: (name: string) => string[];
  /** Its lock files, in the order it looks for them: the first present is followed, and its digest keys the dependency cache. */
  lockFiles: readonly string[];
  /** Its own download cache inside the package-cache layer (npm's and Bun's are set for every build: node's dependencies.ts). */
  cacheEnv?: (cacheDir: string, o: { pnp: boolean }) => Record<string, string>;
  /** What its frozen install prints when the lock file no longer matches package.json, and the command that updates it. */
  staleLockfile?: { pattern: RegExp; lock: string; local: string };
  credentialsIn: CredentialsIn;
  /** The build's tool layer that holds it (Yarn 1 and Berry share `yarn`); npm comes with Node.js. */
  layer?: string;
}

export const PACKAGE_MANAGERS: Record<Manager, PackageManager> = {
  npm: {
    install: { argv: ['npm', 'install'], includeDev: ['--production=false'], locked: [], unattendedAfter: ['--no-audit', '--no-fund'] },
    lockFiles: [LOCK_FILES.npmShrinkwrap, LOCK_FILES.npm],
    credentialsIn: 'project-npmrc',
  },
  pnpm: {
    install: { argv: ['pnpm', 'install'], includeDev: ['--prod', 'false'], omitDev: { flags: ['--prod'], when: 'production' }, locked: ['--frozen-lockfile'] },
    lockFiles: [LOCK_FILES.pnpm],
    cacheEnv: (dir) => ({ npm_config_store_dir: path.join(dir, 'pnpm-store') }),
    staleLockfile: {
      pattern: /ERR_PNPM_OUTDATED_LOCKFILE|ERR_PNPM_LOCKFILE_CONFIG_MISMATCH|lockfile needs updates/i,
      lock: LOCK_FILES.pnpm,
      local: 'pnpm install',
    },
    credentialsIn: 'user-npmrc',
    layer: 'pnpm',
  },
  yarn: {
    install: { argv: ['yarn', 'install'], includeDev: ['--production=false'], locked: ['--frozen-lockfile'], unattendedBefore: ['--non-interactive'] },
    lockFiles: [LOCK_FILES.yarn],
    cacheEnv: (dir) => ({ YARN_CACHE_FOLDER: path.join(dir, 'yarn') }),
    staleLockfile: { pattern: /Your lockfile needs to be updated/i, lock: LOCK_FILES.yarn, local: 'yarn install' },
    credentialsIn: 'project-npmrc',
    layer: 'yarn',
  },
  'yarn-berry': {
    // Berry refuses --production: it installs everything, then drops dev dependencies (install-command.ts).
    install: { argv: ['yarn', 'install'], includeDev: [], locked: ['--immutable'] },
    runScript: (name) => ['yarn', 'run', name],
    lockFiles: [LOCK_FILES.yarn],
    // Plug'n'Play points at its zip archives: they must sit in the app (.yarn/cache), not in a global cache.
    cacheEnv: (dir, { pnp }) => ({ ...(pnp ? { YARN_ENABLE_GLOBAL_CACHE: 'false' } : {}), YARN_GLOBAL_FOLDER: path.join(dir, 'yarn-berry') }),
    staleLockfile: { pattern: /YN0028|lockfile would have been modified/i, lock: LOCK_FILES.yarn, local: 'yarn install' },
    credentialsIn: 'environment',
    layer: 'yarn',
  },
  bun: {
    install: { argv: ['bun', 'install'], includeDev: [], omitDev: { flags: ['--omit', 'dev'], when: 'always' }, locked: ['--frozen-lockfile'] },
    lockFiles: [LOCK_FILES.bun, LOCK_FILES.bunBinary],
    staleLockfile: { pattern: /lockfile had changes, but lockfile is frozen/i, lock: LOCK_FILES.bun, local: 'bun install' },
    credentialsIn: 'project-npmrc',
    layer: 'bun',
  },
  // CC_CUSTOM_BUILD_TOOL: a command of the user's, npm-like; any lock file keys the cache.
  custom: { lockFiles: [LOCK_FILES.npm, LOCK_FILES.yarn, LOCK_FILES.pnpm, LOCK_FILES.bun], credentialsIn: 'project-npmrc' },
};
