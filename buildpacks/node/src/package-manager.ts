/**
 * The package manager (contract, node rules 4, 5, 7, 8): CC_NODE_BUILD_TOOL, else the lock file at
 * the app root (yarn.lock → pnpm-lock.yaml → bun.lock), else npm. Its version comes from the
 * `packageManager` field of package.json; the install command and its dev-dependency flag follow
 * the contract's table.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../../lib/errors.ts';
import type { PackageJson } from './package-json.ts';
import { value } from '../../../lib/config/read.ts';

export const BUILD_TOOLS = ['bun', 'npm', 'npm-install', 'npm-ci', 'pnpm', 'yarn-berry', 'custom'] as const;
export const DEPRECATED_BUILD_TOOLS = ['yarn', 'yarn2'] as const;
export type BuildTool = (typeof BUILD_TOOLS)[number] | (typeof DEPRECATED_BUILD_TOOLS)[number];

/** The program that installs: npm for npm/npm-install/npm-ci, yarn 1 for `yarn`, Berry for yarn-berry and yarn2. */
export type Manager = 'npm' | 'pnpm' | 'yarn' | 'yarn-berry' | 'bun' | 'custom';

export const DEFAULT_YARN1_VERSION = '1.22.22';
/** Contract: "the latest packaged 4.x Yarn" with yarn-berry. */
export const DEFAULT_YARN_BERRY_RANGE = '4';
export const DEFAULT_YARN2_RANGE = '2';
/** pnpm 12's package needs its install script to swap in the native binary; 10.x runs on every supported Node. */
export const DEFAULT_PNPM_RANGE = '10';
/** Contract, "Versioning": Bun, latest available, 1.3.14. */
export const DEFAULT_BUN_VERSION = '1.3.14';

export interface ToolChoice {
  tool: BuildTool;
  manager: Manager;
  /** Why: `CC_NODE_BUILD_TOOL`, `yarn.lock`, `default`… */
  because: string;
  /** The deprecation warning for Yarn 1.x and 2.x. */
  deprecated?: string;
}

export const LOCK_FILES = { yarn: 'yarn.lock', pnpm: 'pnpm-lock.yaml', bun: 'bun.lock', bunBinary: 'bun.lockb', npm: 'package-lock.json', npmShrinkwrap: 'npm-shrinkwrap.json' } as const;

export interface PackageManagerField {
  name: 'npm' | 'pnpm' | 'yarn' | 'bun';
  version: string;
  hash?: { algorithm: string; hex: string };
}

const PM_RE = /^(npm|pnpm|yarn|bun)@(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)(?:\+(sha1|sha224|sha256|sha384|sha512)\.([0-9a-fA-F]+))?$/;

/** `pnpm@10.12.1+sha512.<hex>` → its parts; undefined when the field is absent. */
export function parsePackageManager(pkg: PackageJson, pkgFile = 'package.json'): PackageManagerField | undefined {
  const raw = pkg.packageManager?.trim();
  if (!raw) return undefined;
  const m = PM_RE.exec(raw);
  if (!m) {
    throw new UserError({
      id: 'node/package-manager/field-invalid',
      title: 'The packageManager field of package.json is not <name>@<version>',
      seen: { what: 'packageManager', value: raw, where: pkgFile },
      rule: 'packageManager is <npm|pnpm|yarn|bun>@<exact version>, optionally followed by +<algorithm>.<hex hash>, e.g. pnpm@10.12.1.',
      fix: 'Write an exact version (no range, no URL), e.g. "packageManager": "pnpm@10.12.1", or remove the field.',
    });
  }
  return { name: m[1] as PackageManagerField['name'], version: m[2]!, ...(m[3] ? { hash: { algorithm: m[3], hex: m[4]!.toLowerCase() } } : {}) };
}

const YARN_DEPRECATION = (version: string) =>
  `Yarn ${version} is deprecated on this platform: move to Yarn 4 (set "packageManager": "yarn@4.x.y" in package.json, or CC_NODE_BUILD_TOOL=yarn-berry)`;

function managerOf(tool: BuildTool): Manager {
  switch (tool) {
    case 'npm':
    case 'npm-install':
    case 'npm-ci':
      return 'npm';
    case 'yarn2':
      return 'yarn-berry';
    default:
      return tool;
  }
}

export function chooseTool(appDir: string, pkg: PackageJson, env: Record<string, string | undefined>): ToolChoice {
  const pm = parsePackageManager(pkg);
  const asked = env.CC_NODE_BUILD_TOOL?.trim();
  if (asked) {
    const all: readonly string[] = [...BUILD_TOOLS, ...DEPRECATED_BUILD_TOOLS];
    if (!all.includes(asked)) {
      throw new UserError({
        id: 'node/build-tool/unknown',
        title: 'CC_NODE_BUILD_TOOL names no known package manager',
        seen: { what: 'CC_NODE_BUILD_TOOL', value: asked, where: 'the application environment' },
        rule: `CC_NODE_BUILD_TOOL is one of ${BUILD_TOOLS.join(', ')} (deprecated: ${DEPRECATED_BUILD_TOOLS.join(', ')}).`,
        fix: 'Set CC_NODE_BUILD_TOOL to one of those values, or unset it to detect the package manager from the lock file.',
      });
    }
    const tool = asked as BuildTool;
    if (tool === 'custom' && !env.CC_CUSTOM_BUILD_TOOL?.trim()) {
      throw new UserError({
        id: 'node/build-tool/custom-missing',
        title: 'CC_NODE_BUILD_TOOL=custom needs CC_CUSTOM_BUILD_TOOL',
        seen: { what: 'CC_CUSTOM_BUILD_TOOL', value: '', where: 'the application environment' },
        rule: 'With CC_NODE_BUILD_TOOL=custom, CC_CUSTOM_BUILD_TOOL is the command that installs the dependencies.',
        fix: 'Set CC_CUSTOM_BUILD_TOOL, e.g. CC_CUSTOM_BUILD_TOOL="npm install --legacy-peer-deps", or choose another CC_NODE_BUILD_TOOL.',
      });
    }
    const deprecated = tool === 'yarn' ? YARN_DEPRECATION('1.x') : tool === 'yarn2' ? YARN_DEPRECATION('2.x') : undefined;
    return { tool, manager: managerOf(tool), because: 'CC_NODE_BUILD_TOOL', ...(deprecated ? { deprecated } : {}) };
  }
  const has = (f: string) => fs.existsSync(path.join(appDir, f));
  if (has(LOCK_FILES.yarn)) {
    const major = pm?.name === 'yarn' ? Number(pm.version.split('.')[0]) : undefined;
    if (major === 3 || (major !== undefined && major >= 4)) return { tool: 'yarn-berry', manager: 'yarn-berry', because: `yarn.lock and packageManager yarn@${pm!.version}` };
    if (major === 2) return { tool: 'yarn2', manager: 'yarn-berry', because: `yarn.lock and packageManager yarn@${pm!.version}`, deprecated: YARN_DEPRECATION('2.x') };
    // A Berry project that pins its Yarn with yarnPath (no packageManager) is no Yarn 1 project.
    const pinned = major === undefined ? yarnPathOf(appDir) : undefined;
    if (pinned) {
      const because = `yarn.lock and yarnPath ${pinned.file} in .yarnrc.yml`;
      if (pinned.version?.startsWith('2.')) return { tool: 'yarn2', manager: 'yarn-berry', because, deprecated: YARN_DEPRECATION('2.x') };
      return { tool: 'yarn-berry', manager: 'yarn-berry', because };
    }
    return { tool: 'yarn', manager: 'yarn', because: 'yarn.lock', deprecated: YARN_DEPRECATION('1.x') };
  }
  if (has(LOCK_FILES.pnpm)) return { tool: 'pnpm', manager: 'pnpm', because: LOCK_FILES.pnpm };
  if (has(LOCK_FILES.bun)) return { tool: 'bun', manager: 'bun', because: LOCK_FILES.bun };
  if (has(LOCK_FILES.bunBinary)) return { tool: 'bun', manager: 'bun', because: LOCK_FILES.bunBinary };
  return { tool: 'npm', manager: 'npm', because: 'default (no yarn.lock, pnpm-lock.yaml or bun.lock)' };
}

/** The version constraint for the package manager program, and where it came from. npm is the one bundled with Node. */
/**
 * The pnpm major that writes a lockfileVersion (pnpm's own table): without packageManager, the lock
 * file says which pnpm made it, and a newer major would rewrite it and resolve anew.
 */
export function pnpmForLockfile(lockfileVersion: string | undefined): { constraint: string; because: string } | undefined {
  const v = lockfileVersion?.trim().replace(/^['"]|['"]$/g, '');
  if (!v) return undefined;
  const major = Number(v.split('.')[0]);
  const range = v === '5.3' ? '6' : major === 5 ? '7' : major === 6 ? '8' : undefined; // 9.0: pnpm 9 and 10, the default
  if (!range) return undefined;
  return { constraint: range, because: `pnpm-lock.yaml lockfileVersion ${v}: latest pnpm ${range}.x` };
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

/** Yarn Berry pinned by `yarnPath` in .yarnrc.yml (a release committed in the project), without packageManager. */
export function yarnPathOf(appDir: string): { file: string; version?: string } | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(appDir, '.yarnrc.yml'), 'utf8');
  } catch {
    return undefined;
  }
  const m = /^yarnPath:\s*['"]?([^'"\n]+?)['"]?\s*$/m.exec(text);
  if (!m) return undefined;
  const version = /(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\.c?js$/.exec(m[1]!)?.[1];
  return { file: m[1]!, ...(version ? { version } : {}) };
}

export function managerVersion(choice: ToolChoice, pm: PackageManagerField | undefined, appDir?: string): { constraint: string; because: string; hash?: PackageManagerField['hash'] } | undefined {
  const fromField = (name: PackageManagerField['name']) =>
    pm?.name === name ? { constraint: pm.version, because: `packageManager ${pm.name}@${pm.version}`, ...(pm.hash ? { hash: pm.hash } : {}) } : undefined;
  switch (choice.manager) {
    case 'pnpm':
      return fromField('pnpm') ?? (appDir ? pnpmForLockfile(pnpmLockfileVersion(appDir)) : undefined) ?? { constraint: DEFAULT_PNPM_RANGE, because: 'default (no packageManager pnpm@…): latest pnpm 10.x' };
    case 'yarn': {
      const f = fromField('yarn');
      return f && f.constraint.startsWith('1.') ? f : { constraint: DEFAULT_YARN1_VERSION, because: 'system default Yarn 1.22.22' };
    }
    case 'yarn-berry': {
      const f = fromField('yarn');
      if (f && !f.constraint.startsWith('1.')) return f;
      const pinned = appDir ? yarnPathOf(appDir) : undefined;
      // Any Yarn runs the release yarnPath names: the one installed only starts it.
      if (pinned?.version) return { constraint: pinned.version, because: `yarnPath ${pinned.file} in .yarnrc.yml` };
      return choice.tool === 'yarn2'
        ? { constraint: DEFAULT_YARN2_RANGE, because: 'CC_NODE_BUILD_TOOL=yarn2: latest Yarn 2.x' }
        : { constraint: DEFAULT_YARN_BERRY_RANGE, because: 'latest packaged Yarn 4.x' };
    }
    case 'bun':
      return fromField('bun') ?? { constraint: DEFAULT_BUN_VERSION, because: 'latest available Bun' };
    default:
      return undefined;
  }
}

/**
 * Package managers put on the build PATH beside the one that installs (node rule 7): Yarn in every
 * build (the packageManager version, else the system default 1.22.22; yarn-berry brings its own
 * 4.x), and, for a custom command, the pnpm or Bun that packageManager names.
 */
export function buildPathTools(
  choice: ToolChoice,
  pm: PackageManagerField | undefined,
): { id: 'yarn' | 'yarn-berry' | 'pnpm' | 'bun'; constraint: string; because: string; origin: { what: string; where?: string }; hash?: PackageManagerField['hash'] }[] {
  const out: ReturnType<typeof buildPathTools> = [];
  const field = { what: 'packageManager', where: 'package.json' };
  if (choice.manager !== 'yarn' && choice.manager !== 'yarn-berry') {
    if (pm?.name === 'yarn') {
      out.push({ id: pm.version.startsWith('1.') ? 'yarn' : 'yarn-berry', constraint: pm.version, because: `packageManager yarn@${pm.version}`, origin: field, ...(pm.hash ? { hash: pm.hash } : {}) });
    } else {
      out.push({ id: 'yarn', constraint: DEFAULT_YARN1_VERSION, because: 'system default Yarn 1.22.22', origin: { what: 'the system default Yarn' } });
    }
  }
  if (choice.manager === 'custom' && (pm?.name === 'pnpm' || pm?.name === 'bun')) {
    out.push({ id: pm.name, constraint: pm.version, because: `packageManager ${pm.name}@${pm.version}`, origin: field, ...(pm.hash ? { hash: pm.hash } : {}) });
  }
  return out;
}

export type DevDependencies = 'install' | 'ignore' | 'unset';

/** CC_NODE_DEV_DEPENDENCIES (lib/config: install or ignore; another value is its user error). */
export function devDependenciesChoice(env: Record<string, string | undefined>): DevDependencies {
  return value<'install' | 'ignore'>(env, 'CC_NODE_DEV_DEPENDENCIES') ?? 'unset';
}

export interface InstallCommand {
  /** The program, looked up on the build PATH (npm, pnpm, yarn, bun) or /bin/sh for custom. */
  argv: string[];
  /** A second command, run after the install (Yarn Berry drops dev dependencies with `workspaces focus`). */
  then?: string[];
  /** Whether the install leaves development dependencies out (for the log). */
  dev: 'included' | 'excluded';
  /**
   * Yarn 2 and 3 have no `workspaces focus` without the workspace-tools plugin: dev dependencies are
   * dropped by a second install from manifests without devDependencies (dependencies.ts).
   */
  berryStripDev?: boolean;
}

export interface InstallOptions {
  /** A lock file is there: the install follows it and fails when it is out of date (each tool's CI mode). */
  locked?: boolean;
  /** Yarn Berry's major version (packageManager, yarnPath or the installed one). */
  berryMajor?: number;
}

/**
 * The install command, with the contract's dev-dependency flags (node rule 8): with `install` an
 * explicit flag includes them whatever NODE_ENV is; unset or `ignore`, Bun adds `--omit dev` and the
 * others exclude them when NODE_ENV=production.
 */
export function installCommand(choice: ToolChoice, dev: DevDependencies, nodeEnv: string, env: Record<string, string | undefined>, opts: InstallOptions = {}): InstallCommand {
  const locked = Boolean(opts.locked);
  const include = dev === 'install';
  const production = nodeEnv === 'production';
  const devState = include || !production ? 'included' : 'excluded';
  switch (choice.tool) {
    case 'npm':
    case 'npm-install':
      return { argv: ['npm', 'install', ...(include ? ['--production=false'] : []), '--no-audit', '--no-fund'], dev: devState };
    case 'npm-ci':
      return { argv: ['npm', 'ci', ...(include ? ['--include=dev'] : []), '--no-audit', '--no-fund'], dev: devState };
    case 'pnpm':
      return { argv: ['pnpm', 'install', ...(include ? ['--prod', 'false'] : production ? ['--prod'] : []), ...(locked ? ['--frozen-lockfile'] : [])], dev: devState };
    case 'yarn':
      return { argv: ['yarn', 'install', '--non-interactive', ...(include ? ['--production=false'] : []), ...(locked ? ['--frozen-lockfile'] : [])], dev: devState };
    case 'yarn-berry':
    case 'yarn2': {
      // Berry refuses --production: it installs everything, then drops dev dependencies: with
      // `workspaces focus --production` from Yarn 4 on (built in), by a second install before.
      const argv = ['yarn', 'install', ...(locked ? ['--immutable'] : [])];
      if (devState === 'included') return { argv, dev: devState };
      if ((opts.berryMajor ?? 4) >= 4) return { argv, then: ['yarn', 'workspaces', 'focus', '--all', '--production'], dev: devState };
      return { argv, berryStripDev: true, dev: devState };
    }
    case 'bun':
      return { argv: ['bun', 'install', ...(include ? [] : ['--omit', 'dev']), ...(locked ? ['--frozen-lockfile'] : [])], dev: include ? 'included' : 'excluded' };
    case 'custom':
      return { argv: ['/bin/sh', '-c', env.CC_CUSTOM_BUILD_TOOL!.trim()], dev: devState };
  }
}

/** The lock file the chosen tool reads, if present: its digest keys the dependency cache. */
export function lockFileOf(appDir: string, manager: Manager): string | undefined {
  const candidates: Record<Manager, string[]> = {
    npm: [LOCK_FILES.npmShrinkwrap, LOCK_FILES.npm],
    pnpm: [LOCK_FILES.pnpm],
    yarn: [LOCK_FILES.yarn],
    'yarn-berry': [LOCK_FILES.yarn],
    bun: [LOCK_FILES.bun, LOCK_FILES.bunBinary],
    custom: [LOCK_FILES.npm, LOCK_FILES.yarn, LOCK_FILES.pnpm, LOCK_FILES.bun],
  };
  return candidates[manager].find((f) => fs.existsSync(path.join(appDir, f)));
}
