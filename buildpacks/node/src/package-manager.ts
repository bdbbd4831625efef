/**
 * The package manager's own version (contract, node rule 7): pnpm, Yarn and Bun at the version the
 * `packageManager` field of package.json names, else their defaults, and the package managers put
 * on the build PATH beside the one that installs. Where each version comes from is the table's
 * (lib/js-project/package-managers.ts); which manager installs, and with which command, is shared
 * with static: lib/js-project.
 */
import type { ToolChoice } from '../../../lib/js-project/build-tool.ts';
import {
  managerNamedBy,
  MANAGERS,
  PACKAGE_MANAGERS,
  type CheckedInYarn,
  type InstalledManager,
  type ManagerVersion,
  type PackageManagerField,
} from '../../../lib/js-project/package-managers.ts';

export {
  DEFAULT_BUN_VERSION,
  DEFAULT_PNPM_RANGE,
  DEFAULT_YARN1_VERSION,
  DEFAULT_YARN2_RANGE,
  DEFAULT_YARN_BERRY_RANGE,
  pnpmForLockfile,
  pnpmLockfileVersion,
  type ManagerVersion,
} from '../../../lib/js-project/package-managers.ts';

/**
 * The version of the package manager that installs; undefined for one the build does not install
 * (npm comes with Node.js; a custom command is the user's).
 */
export function managerVersion(choice: ToolChoice, pm: PackageManagerField | undefined, appDir?: string, release?: CheckedInYarn): ManagerVersion | undefined {
  return PACKAGE_MANAGERS[choice.manager].version?.({ tool: choice.tool, pm, ...(appDir ? { appDir } : {}), ...(release ? { release } : {}) });
}

export interface BuildPathTool {
  id: InstalledManager;
  constraint: string;
  because: string;
  origin: { what: string; where?: string };
  hash?: PackageManagerField['hash'];
}

/**
 * Package managers put on the build PATH beside the one that installs (node rule 7): those of the
 * table on every build PATH (Yarn: the packageManager version, else the system default 1.22.22;
 * yarn-berry brings its own 4.x), and, for a custom command, the one packageManager names.
 */
export function buildPathTools(choice: ToolChoice, pm: PackageManagerField | undefined): BuildPathTool[] {
  const out: BuildPathTool[] = [];
  const chosen = PACKAGE_MANAGERS[choice.manager];
  const named = managerNamedBy(pm);
  const field = { what: 'packageManager', where: 'package.json' };
  const fromField = (id: InstalledManager, p: PackageManagerField): BuildPathTool => ({
    id,
    constraint: p.version,
    because: `packageManager ${p.name}@${p.version}`,
    origin: field,
    ...(p.hash ? { hash: p.hash } : {}),
  });
  for (const id of MANAGERS) {
    const m = PACKAGE_MANAGERS[id];
    // The manager that installs brings its own program: a Yarn beside Yarn is not added.
    if (!m.onEveryBuildPath || chosen.field?.name === m.field?.name) continue;
    if (pm && named && PACKAGE_MANAGERS[named].field?.name === m.field?.name) out.push(fromField(named as InstalledManager, pm));
    else {
      const v = m.version!({ tool: m.buildTools[0]!.name, pm: undefined });
      out.push({ id: id as InstalledManager, constraint: v.constraint, because: v.because, origin: { what: m.onEveryBuildPath.origin } });
    }
  }
  // A custom command (no install command of the table's) finds the manager packageManager names, if the build installs it.
  if (!chosen.install && pm && named && PACKAGE_MANAGERS[named].version && !out.some((t) => PACKAGE_MANAGERS[t.id].field?.name === pm.name)) {
    out.push(fromField(named as InstalledManager, pm));
  }
  return out;
}
