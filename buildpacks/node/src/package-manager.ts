/**
 * The package manager's own version (contract, node rule 7): pnpm, Yarn and Bun at the version the
 * `packageManager` field of package.json names, else their engines range, else their defaults, and
 * the package managers put on the build PATH beside the one of the app's commands. Where each
 * version comes from is the table's (lib/js-project/package-managers.ts); which manager installs,
 * and with which command, is shared with static: lib/js-project.
 */
import semver from 'semver';
import { appManager, type ToolChoice } from '../../../lib/js-project/build-tool.ts';
import {
  managerNamedBy,
  MANAGERS,
  PACKAGE_MANAGERS,
  type CheckedInYarn,
  type BuildTool,
  type InstalledManager,
  type ManagerVersion,
  type PackageManager,
  type PackageManagerField,
} from '../../../lib/js-project/package-managers.ts';

/**
 * The version of the package manager the app's commands use (the one that installs, or a custom
 * command's): yarnPath's release or packageManager, else the newest release its engines range
 * (`engines.pnpm`, `engines.yarn`, `engines.bun`) allows, else the table's (the lock file's, the
 * default). Undefined for one the build does not install (npm comes with Node.js).
 */
export function managerVersion(
  choice: ToolChoice,
  pm: PackageManagerField | undefined,
  appDir?: string,
  release?: CheckedInYarn,
  engines?: Record<string, unknown>,
): ManagerVersion | undefined {
  const manager = appManager(choice);
  const entry = PACKAGE_MANAGERS[manager];
  const tool = manager === choice.manager ? choice.tool : entry.buildTools[0]!.name;
  const v = entry.version?.({ tool, pm, ...(appDir ? { appDir } : {}), ...(release ? { release } : {}) });
  if (!v || v.source === 'packageManager' || v.source === 'yarnPath') return v;
  return enginesVersion(entry, tool, engines) ?? v;
}

/**
 * The manager's engines range, when package.json has one that its line can satisfy (Yarn 1's
 * engines.yarn ">=4" is a Berry project's: yarn-project.ts refuses it).
 */
function enginesVersion(entry: PackageManager, tool: BuildTool, engines: Record<string, unknown> | undefined): ManagerVersion | undefined {
  const name = entry.field?.name;
  const raw = name ? engines?.[name] : undefined;
  const range = typeof raw === 'string' ? raw.trim() : '';
  if (!name || !range) return undefined;
  const line = entry.yarn === 'classic' ? '<2.0.0' : entry.yarn === 'berry' ? '>=2.0.0' : '*';
  if (semver.validRange(range) && !semver.intersects(range, line)) return undefined;
  const row = entry.buildTools.find((t) => t.name === tool);
  const label = entry.yarn === 'classic' ? 'Yarn 1' : entry.yarn === 'berry' ? 'Yarn 2 or later' : name;
  return {
    constraint: range,
    because: `engines.${name} "${range}" in package.json: the newest release that satisfies it`,
    source: 'engines',
    engines: {
      field: `engines.${name}`,
      label,
      accept: (version) => entry.field!.takes(semver.major(version)) && (row?.forMajor?.(semver.major(version)) ?? true),
    },
  };
}

export interface BuildPathTool {
  id: InstalledManager;
  constraint: string;
  because: string;
  origin: { what: string; where?: string };
  hash?: PackageManagerField['hash'];
  engines?: ManagerVersion['engines'];
}

/**
 * Package managers put on the build PATH beside the one the app's commands use (node rule 7): those
 * of the table on every build PATH (Yarn: the packageManager version, else its engines range, else
 * the system default 1.22.22; yarn-berry brings its own 4.x).
 */
export function buildPathTools(choice: ToolChoice, pm: PackageManagerField | undefined, engines?: Record<string, unknown>): BuildPathTool[] {
  const out: BuildPathTool[] = [];
  const chosen = PACKAGE_MANAGERS[appManager(choice)];
  const named = managerNamedBy(pm);
  for (const id of MANAGERS) {
    const m = PACKAGE_MANAGERS[id];
    // The manager of the app's commands brings its own program: a Yarn beside Yarn is not added.
    if (!m.onEveryBuildPath || chosen.field?.name === m.field?.name) continue;
    if (pm && named && PACKAGE_MANAGERS[named].field?.name === m.field?.name) {
      out.push({
        id: named as InstalledManager,
        constraint: pm.version,
        because: `packageManager ${pm.name}@${pm.version}`,
        origin: { what: 'packageManager', where: 'package.json' },
        ...(pm.hash ? { hash: pm.hash } : {}),
      });
    } else {
      const tool = m.buildTools[0]!.name;
      const v = enginesVersion(m, tool, engines) ?? m.version!({ tool, pm: undefined });
      out.push({
        id: id as InstalledManager,
        constraint: v.constraint,
        because: v.because,
        origin: { what: v.engines?.field ?? m.onEveryBuildPath.origin, ...(v.engines ? { where: 'package.json' } : {}) },
        ...(v.engines ? { engines: v.engines } : {}),
      });
    }
  }
  return out;
}
