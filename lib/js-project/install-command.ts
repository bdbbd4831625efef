/**
 * The install command of each package manager (contract, node rule 4) with the dev-dependency flags
 * of node rule 8: with CC_NODE_DEV_DEPENDENCIES=install an explicit flag includes them whatever
 * NODE_ENV is; unset or `ignore`, Bun adds `--omit dev` and the others exclude them when
 * NODE_ENV=production. With a lock file each tool installs in its CI mode (the lock is followed, and
 * one out of date is an error). static's generators use the same table without dev-dependency
 * flags: a site generator is usually a dev dependency.
 */
import { read } from '../config/read.ts';
import type { ToolChoice } from './build-tool.ts';
import { managerOfTool, PACKAGE_MANAGERS, type Manager } from './package-managers.ts';

export type DevDependencies = 'install' | 'ignore' | 'unset';

/** CC_NODE_DEV_DEPENDENCIES; an invalid value is its `config/CC_NODE_DEV_DEPENDENCIES/invalid` error. */
export function devDependenciesChoice(env: Record<string, string | undefined>): DevDependencies {
  return read<'install' | 'ignore'>(env, 'CC_NODE_DEV_DEPENDENCIES')?.value ?? 'unset';
}

export interface InstallCommand {
  /** The program, looked up on the build PATH (npm, pnpm, yarn, bun) or /bin/sh for custom. */
  argv: string[];
  /** A second command, run after the install (Yarn Berry drops dev dependencies with `workspaces focus`). */
  then?: string[];
  /** Whether the install leaves development dependencies out (for the log). */
  dev: 'included' | 'excluded';
  /**
   * A custom command with CC_NODE_DEV_DEPENDENCIES=install: the variables that make the installs of
   * the managers on its PATH include development dependencies whatever NODE_ENV is (rule 8).
   */
  env?: Record<string, string>;
  /**
   * Yarn 2 and 3 have no `workspaces focus` without the workspace-tools plugin: dev dependencies are
   * dropped by a second install from manifests without devDependencies (node's dependencies.ts).
   */
  berryStripDev?: boolean;
}

export interface InstallOptions {
  /**
   * Node rule 8: CC_NODE_DEV_DEPENDENCIES and NODE_ENV. Absent: no dev-dependency flag at all, each
   * tool installs everything (static's generators).
   */
  dev?: { choice: DevDependencies; nodeEnv: string };
  /** A lock file is there: the install follows it and fails when it is out of date (each tool's CI mode). */
  locked?: boolean;
  /** Yarn Berry's major version (packageManager, yarnPath or the installed one). */
  berryMajor?: number;
  /** Flags for a run nobody watches: npm's --no-audit --no-fund, Yarn 1's --non-interactive (node). */
  unattended?: boolean;
  /** The managers on the build PATH, whose installs a custom command may run. */
  onPath?: readonly Manager[];
}

export function installCommand(choice: ToolChoice, opts: InstallOptions = {}): InstallCommand {
  const entry = PACKAGE_MANAGERS[choice.manager];
  // A build tool's own row (npm ci), else its manager's; none: CC_CUSTOM_BUILD_TOOL is the command.
  const row = managerOfTool(choice.tool).row.install ?? entry.install;
  if (!row) {
    const production = opts.dev?.nodeEnv === 'production';
    const argv = ['/bin/sh', '-c', choice.command!];
    if (opts.dev?.choice !== 'install') return { argv, dev: production ? 'excluded' : 'included' };
    const env = Object.assign({}, ...(opts.onPath ?? []).map((m) => PACKAGE_MANAGERS[m].install?.includeDevEnv ?? {})) as Record<string, string>;
    return { argv, dev: 'included', ...(Object.keys(env).length ? { env } : {}) };
  }
  const include = !opts.dev || opts.dev.choice === 'install';
  const production = opts.dev?.nodeEnv === 'production';
  const omit = !include && row.omitDev && (row.omitDev.when === 'always' || production);
  const dev = include || (!production && row.omitDev?.when !== 'always') ? 'included' : 'excluded';
  const argv = [
    ...row.argv,
    ...(opts.unattended ? (row.unattendedBefore ?? []) : []),
    ...(opts.dev?.choice === 'install' ? row.includeDev : omit ? row.omitDev!.flags : []),
    ...(opts.unattended ? (row.unattendedAfter ?? []) : []),
    ...(opts.locked ? row.locked : []),
  ];
  if (!row.pruneDev || dev === 'included') return { argv, dev };
  // Yarn 4 drops dev dependencies with `workspaces focus --production` (built in); 2 and 3 by a second install.
  if ((opts.berryMajor ?? row.pruneDev.fromMajor) >= row.pruneDev.fromMajor) return { argv, then: row.pruneDev.focus, dev };
  return { argv, berryStripDev: true, dev };
}
