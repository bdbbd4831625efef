/**
 * The package manager of a node build (contract, node rules 4 and 5): CC_NODE_BUILD_TOOL when set
 * (CC_CUSTOM_BUILD_TOOL with `custom`), else the lock file at the app root, else npm. The values
 * CC_NODE_BUILD_TOOL accepts are declared in lib/config/variables.ts; an invalid one is its
 * `config/CC_NODE_BUILD_TOOL/invalid` error. Which entry of the table each value chooses, and which
 * are deprecated, is package-managers.ts's.
 */
import { raw, read } from '../config/read.ts';
import { NODE_BUILD_TOOLS } from '../config/variables.ts';
import { UserError } from '../errors.ts';
import { detectFromLockFiles, lockFileOf, type Manager } from './lock-files.ts';
import type { PackageManagerField } from './package-manager-field.ts';
import { buildCommandExample, DEFAULT_MANAGER, managerNamedBy, managerOfTool, MANAGERS, PACKAGE_MANAGERS, type BuildTool } from './package-managers.ts';

export const DEPRECATED_BUILD_TOOLS: readonly BuildTool[] = MANAGERS.flatMap((m) =>
  PACKAGE_MANAGERS[m].buildTools.filter((t) => t.deprecated).map((t) => t.name),
);
export const BUILD_TOOLS: readonly BuildTool[] = NODE_BUILD_TOOLS.filter((t) => !DEPRECATED_BUILD_TOOLS.includes(t));

export interface ToolChoice {
  tool: BuildTool;
  manager: Manager;
  /** Why: `CC_NODE_BUILD_TOOL`, `yarn.lock`, `default`… */
  because: string;
  /** The deprecation warning for Yarn 1.x and 2.x. */
  deprecated?: string;
  /** CC_CUSTOM_BUILD_TOOL, with `custom`. */
  command?: string;
  /**
   * With `custom`: the manager the app's own commands use, which the build installs for them as it
   * would install it to run the install itself (node rules 5 and 7): the one packageManager names,
   * else the one the lock file picks, else npm.
   */
  app?: { manager: Manager; because: string };
}

/** The manager of the app's own commands: the one that installs, or the one a custom command uses. */
export function appManager(choice: ToolChoice): Manager {
  return choice.app?.manager ?? choice.manager;
}

export function chooseTool(appDir: string, pm: PackageManagerField | undefined, env: Record<string, string | undefined>): ToolChoice {
  const asked = read<BuildTool>(env, 'CC_NODE_BUILD_TOOL');
  if (asked?.source === 'env') {
    const tool = asked.value;
    const { manager, row } = managerOfTool(tool);
    const base: ToolChoice = { tool, manager, because: 'CC_NODE_BUILD_TOOL' };
    if (row.deprecated) return { ...base, deprecated: row.deprecated };
    // A manager without an install command of its own: CC_CUSTOM_BUILD_TOOL is the command.
    if (PACKAGE_MANAGERS[manager].install) return base;
    const command = raw(env, 'CC_CUSTOM_BUILD_TOOL');
    const named = managerNamedBy(pm);
    const found = named ? undefined : detectFromLockFiles(appDir, pm);
    const app = named
      ? { manager: named, because: `packageManager ${pm!.name}@${pm!.version}` }
      : found
        ? { manager: found.manager, because: found.because }
        : { manager: DEFAULT_MANAGER, because: 'no packageManager, yarn.lock, pnpm-lock.yaml or bun.lock' };
    if (!command) {
      throw new UserError({
        id: 'node/build-tool/custom-missing',
        title: 'CC_NODE_BUILD_TOOL=custom needs CC_CUSTOM_BUILD_TOOL',
        seen: { what: 'CC_CUSTOM_BUILD_TOOL', value: '', where: 'the application environment' },
        rule: 'With CC_NODE_BUILD_TOOL=custom, CC_CUSTOM_BUILD_TOOL is the command that installs the dependencies.',
        fix: `Set CC_CUSTOM_BUILD_TOOL, e.g. CC_CUSTOM_BUILD_TOOL="${buildCommandExample(app.manager, lockFileOf(appDir, app.manager) !== undefined)}", or choose another CC_NODE_BUILD_TOOL.`,
      });
    }
    return { ...base, command, app };
  }
  const tool = PACKAGE_MANAGERS[DEFAULT_MANAGER].buildTools[0]!.name;
  return detectFromLockFiles(appDir, pm) ?? { tool, manager: DEFAULT_MANAGER, because: 'default (no yarn.lock, pnpm-lock.yaml or bun.lock)' };
}
