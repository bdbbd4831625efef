/**
 * The package manager's own version (contract, node rule 7): pnpm, Yarn and Bun at the version the
 * `packageManager` field of package.json names, else the defaults below, and the package managers
 * put on the build PATH beside the one that installs. Which manager installs, and with which
 * command, is shared with static: lib/js-project.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ToolChoice } from '../../../lib/js-project/build-tool.ts';
import { LOCK_FILES, type CheckedInYarn } from '../../../lib/js-project/lock-files.ts';
import type { PackageManagerField } from '../../../lib/js-project/package-manager-field.ts';

export const DEFAULT_YARN1_VERSION = '1.22.22';
/** Contract: "the latest packaged 4.x Yarn" with yarn-berry. */
export const DEFAULT_YARN_BERRY_RANGE = '4';
export const DEFAULT_YARN2_RANGE = '2';
/** pnpm 12's package needs its install script to swap in the native binary; 10.x runs on every supported Node. */
export const DEFAULT_PNPM_RANGE = '10';
/** Contract, "Versioning": Bun, latest available, 1.3.14. */
export const DEFAULT_BUN_VERSION = '1.3.14';

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

export interface ManagerVersion {
  constraint: string;
  because: string;
  hash?: PackageManagerField['hash'];
  /** Yarn Berry: the release checked in at yarnPath, which runs instead of any installed Yarn. */
  release?: CheckedInYarn;
}

/**
 * The version of the package manager that installs. Yarn Berry: a release checked in at yarnPath
 * runs whatever else is asked (every Yarn hands over to it), then packageManager, then the default.
 */
export function managerVersion(choice: ToolChoice, pm: PackageManagerField | undefined, appDir?: string, release?: CheckedInYarn): ManagerVersion | undefined {
  const fromField = (name: PackageManagerField['name']) =>
    pm?.name === name ? { constraint: pm.version, because: `packageManager ${pm.name}@${pm.version}`, ...(pm.hash ? { hash: pm.hash } : {}) } : undefined;
  switch (choice.manager) {
    case 'pnpm':
      return (
        fromField('pnpm') ??
        (appDir ? pnpmForLockfile(pnpmLockfileVersion(appDir)) : undefined) ?? {
          constraint: DEFAULT_PNPM_RANGE,
          because: 'default (no packageManager pnpm@…): latest pnpm 10.x',
        }
      );
    case 'yarn': {
      const f = fromField('yarn');
      return f?.constraint.startsWith('1.') ? f : { constraint: DEFAULT_YARN1_VERSION, because: 'system default Yarn 1.22.22' };
    }
    case 'yarn-berry': {
      const f = fromField('yarn');
      if (release) {
        const ignored = f && f.constraint !== release.version ? `; packageManager yarn@${f.constraint} does not run: any Yarn hands over to yarnPath` : '';
        return {
          constraint: release.version,
          because: `yarnPath ${release.file} in .yarnrc.yml: the release checked in runs, not looked up in the registry${ignored}`,
          release,
        };
      }
      if (f && !f.constraint.startsWith('1.')) return f;
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
): {
  id: 'yarn' | 'yarn-berry' | 'pnpm' | 'bun';
  constraint: string;
  because: string;
  origin: { what: string; where?: string };
  hash?: PackageManagerField['hash'];
}[] {
  const out: ReturnType<typeof buildPathTools> = [];
  const field = { what: 'packageManager', where: 'package.json' };
  if (choice.manager !== 'yarn' && choice.manager !== 'yarn-berry') {
    if (pm?.name === 'yarn') {
      out.push({
        id: pm.version.startsWith('1.') ? 'yarn' : 'yarn-berry',
        constraint: pm.version,
        because: `packageManager yarn@${pm.version}`,
        origin: field,
        ...(pm.hash ? { hash: pm.hash } : {}),
      });
    } else {
      out.push({ id: 'yarn', constraint: DEFAULT_YARN1_VERSION, because: 'system default Yarn 1.22.22', origin: { what: 'the system default Yarn' } });
    }
  }
  if (choice.manager === 'custom' && (pm?.name === 'pnpm' || pm?.name === 'bun')) {
    out.push({ id: pm.name, constraint: pm.version, because: `packageManager ${pm.name}@${pm.version}`, origin: field, ...(pm.hash ? { hash: pm.hash } : {}) });
  }
  return out;
}
