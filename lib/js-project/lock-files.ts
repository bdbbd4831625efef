/**
 * The lock files of a JavaScript project and what they say (contract, node rule 5): at the app
 * root, in the order of the table's lockRank (yarn.lock, then pnpm-lock.yaml, then bun.lock); a lock
 * file two managers read (yarn.lock: Yarn 1 and Berry) goes to the one packageManager names.
 * node and static both detect the package manager here, so a project installs the same way under
 * both runtimes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { LOCK_FILES, MANAGERS, PACKAGE_MANAGERS, type BuildTool, type CheckedInYarn, type Manager, type PackageManagerField } from './package-managers.ts';

export { LOCK_FILES, type CheckedInYarn, type Manager };

/** What the lock files decide, before any CC_NODE_BUILD_TOOL. */
export interface LockDetection {
  tool: BuildTool;
  manager: Manager;
  /** The file (and field) that decided, for the log. */
  because: string;
  /** The deprecation warning of the tool chosen (Yarn 1.x and 2.x). */
  deprecated?: string;
}

/** `yarnPath` in .yarnrc.yml: a Yarn release committed in the project, which any Yarn hands over to; its version when the file name says it. */
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

/** The managers a lock file picks, lowest lockRank first. */
const RANKED = MANAGERS.filter((m) => PACKAGE_MANAGERS[m].lockRank !== undefined).sort((a, b) => PACKAGE_MANAGERS[a].lockRank! - PACKAGE_MANAGERS[b].lockRank!);

/**
 * Node rule 5; undefined when no lock file names a manager (npm, the default). A release checked in
 * at yarnPath does not choose the tool: it is what runs once a Yarn is chosen (node's
 * yarn-project.ts), and node refuses a Berry project left to Yarn 1 before installing.
 */
export function detectFromLockFiles(appDir: string, pm: PackageManagerField | undefined): LockDetection | undefined {
  const has = (f: string) => fs.existsSync(path.join(appDir, f));
  for (const ranked of RANKED) {
    const lock = PACKAGE_MANAGERS[ranked].lockFiles.find(has);
    if (!lock) continue;
    // Another manager that reads the same lock file takes it when packageManager names it (Yarn ≥ 2 for yarn.lock).
    const major = pm ? Number(pm.version.split('.')[0]) : NaN;
    const named = MANAGERS.find((m) => {
      const field = PACKAGE_MANAGERS[m].field;
      return m !== ranked && PACKAGE_MANAGERS[m].lockFiles.includes(lock) && field !== undefined && pm?.name === field.name && field.takes(major);
    });
    const manager = named ?? ranked;
    const rows = PACKAGE_MANAGERS[manager].buildTools;
    const row = rows.find((r) => r.forMajor?.(major)) ?? rows[0]!;
    return {
      tool: row.name,
      manager,
      because: named ? `${lock} and packageManager ${pm!.name}@${pm!.version}` : lock,
      ...(row.deprecated ? { deprecated: row.deprecated } : {}),
    };
  }
  return undefined;
}

/** The lock file the manager reads, if present: the install follows it, and its digest keys the dependency cache. */
export function lockFileOf(appDir: string, manager: Manager): string | undefined {
  return PACKAGE_MANAGERS[manager].lockFiles.find((f) => fs.existsSync(path.join(appDir, f)));
}
