/**
 * The lock files of a JavaScript project and what they say (contract, node rule 5): at the app
 * root, yarn.lock (Yarn Berry when packageManager names Yarn 3 or later, Yarn 2 when it names 2.x;
 * else the deprecated Yarn 1.x), then pnpm-lock.yaml, then bun.lock.
 * node and static both detect the package manager here, so a project installs the same way under
 * both runtimes.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { PackageManagerField } from './package-manager-field.ts';
import { LOCK_FILES, PACKAGE_MANAGERS, type Manager } from './package-managers.ts';

export { LOCK_FILES, type Manager };

/** What the lock files decide, before any CC_NODE_BUILD_TOOL. */
export interface LockDetection {
  tool: 'yarn' | 'yarn2' | 'yarn-berry' | 'pnpm' | 'bun';
  manager: Exclude<Manager, 'npm' | 'custom'>;
  /** The file (and field) that decided, for the log. */
  because: string;
  /** Yarn 1.x or 2.x: deprecated on the platform. */
  deprecatedYarn?: '1.x' | '2.x';
}

/** A Yarn release checked in at yarnPath (node's yarn-project.ts finds it): it runs instead of any installed Yarn. */
export interface CheckedInYarn {
  /** As .yarnrc.yml writes it (relative to the app). */
  file: string;
  /** Its absolute path in the app. */
  abs: string;
  version: string;
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

/** Node rule 5; undefined when no lock file names a manager (npm, the default). */
export function detectFromLockFiles(appDir: string, pm: PackageManagerField | undefined): LockDetection | undefined {
  const has = (f: string) => fs.existsSync(path.join(appDir, f));
  if (has(LOCK_FILES.yarn)) {
    const major = pm?.name === 'yarn' ? Number(pm.version.split('.')[0]) : undefined;
    if (major !== undefined && major >= 3) return { tool: 'yarn-berry', manager: 'yarn-berry', because: `yarn.lock and packageManager yarn@${pm!.version}` };
    if (major === 2) return { tool: 'yarn2', manager: 'yarn-berry', because: `yarn.lock and packageManager yarn@${pm!.version}`, deprecatedYarn: '2.x' };
    // Rule 5 as the contract states it: without packageManager yarn@3/4, the deprecated Yarn 1.x. A
    // release checked in at yarnPath is what runs once a Yarn is chosen (node's yarn-project.ts); it
    // does not choose the tool, and node refuses a Berry project left to Yarn 1 before installing.
    return { tool: 'yarn', manager: 'yarn', because: LOCK_FILES.yarn, deprecatedYarn: '1.x' };
  }
  if (has(LOCK_FILES.pnpm)) return { tool: 'pnpm', manager: 'pnpm', because: LOCK_FILES.pnpm };
  if (has(LOCK_FILES.bun)) return { tool: 'bun', manager: 'bun', because: LOCK_FILES.bun };
  if (has(LOCK_FILES.bunBinary)) return { tool: 'bun', manager: 'bun', because: LOCK_FILES.bunBinary };
  return undefined;
}

/** The lock file the manager reads, if present: the install follows it, and its digest keys the dependency cache. */
export function lockFileOf(appDir: string, manager: Manager): string | undefined {
  return PACKAGE_MANAGERS[manager].lockFiles.find((f) => fs.existsSync(path.join(appDir, f)));
}
