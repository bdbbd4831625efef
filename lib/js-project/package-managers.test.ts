/**
 * The table of package managers (package-managers.ts), entry by entry: every entry complete, and the
 * facts the contract states (node rules 4, 5, 7 and 8, "Versioning") where the table keeps them. A
 * new entry (Deno's, say) is checked here as soon as it is added.
 */
import { describe, expect, it } from 'vitest';
import { NODE_BUILD_TOOLS } from '../config/variables.ts';
import { installCommand } from './install-command.ts';
import {
  appRuntime,
  DEFAULT_MANAGER,
  managerNamedBy,
  managerOfTool,
  MANAGERS,
  OTHER_TOOLS,
  PACKAGE_MANAGERS,
  TOOL_LAYERS,
  type Manager,
} from './package-managers.ts';

const installed = MANAGERS.filter((m) => PACKAGE_MANAGERS[m].install);

describe('every entry of the table', () => {
  it.each(MANAGERS)('%s: build tools, lock files and credentials', (m) => {
    const e = PACKAGE_MANAGERS[m];
    expect(e.buildTools.length).toBeGreaterThan(0);
    expect(e.lockFiles.length).toBeGreaterThan(0);
    expect(['project-npmrc', 'user-npmrc', 'environment']).toContain(e.credentialsIn);
    if (e.staleLockfile) expect(e.lockFiles).toContain(e.staleLockfile.lock);
  });

  it.each(installed)('%s: a program, an install whose command is that program, a script runner, a version and a frozen mode', (m) => {
    const e = PACKAGE_MANAGERS[m];
    const tool = e.tool!;
    expect(tool, 'its program').toBeDefined();
    expect(tool.pkg()).toMatch(/^(@[a-z0-9-]+\/)?[a-z0-9.-]+$/);
    expect(tool.layer).toMatch(/^[a-z0-9-]+$/);
    expect(tool.bin('1.2.3')).not.toBe('');
    expect(e.install!.argv[0]).toBe(tool.command);
    expect(e.run?.[0]).toBe(tool.command);
    expect(e.field, 'the packageManager name').toBeDefined();
    expect(managerNamedBy({ name: e.field!.name, version: m === 'yarn' ? '1.22.22' : '4.0.0' })).toBe(m);
    // npm comes with Node.js; every other program is installed at a version the table gives.
    if (e.bundled) expect(e.version).toBeUndefined();
    else {
      expect(e.version!({ tool: e.buildTools[0]!.name, pm: undefined }).constraint).toMatch(/^\d+(\.\d+){0,2}$/);
      expect(TOOL_LAYERS).toContain(tool.layer);
    }
    // With a lock file the install is frozen: by its own flags, or by a build tool of its own (npm ci).
    const frozen = e.install!.locked.length > 0 || e.buildTools.some((t) => t.install);
    expect(frozen).toBe(true);
    expect(e.staleLockfile !== undefined || e.buildTools.some((t) => t.install)).toBe(true);
  });

  it('a custom command has neither program nor install: CC_CUSTOM_BUILD_TOOL is the command', () => {
    const custom = MANAGERS.filter((m) => !PACKAGE_MANAGERS[m].install);
    expect(custom).toEqual(['custom']);
    expect(PACKAGE_MANAGERS.custom.tool).toBeUndefined();
  });

  it('Deno, which no lock file chooses (node rule 11), has its program beside the managers', () => {
    expect(OTHER_TOOLS.deno.command).toBe('deno');
    expect(TOOL_LAYERS).toContain('deno');
  });
});

describe('what the contract says, as the table keeps it', () => {
  it('every CC_NODE_BUILD_TOOL value chooses exactly one entry (node rule 4)', () => {
    const rows = MANAGERS.flatMap((m) => PACKAGE_MANAGERS[m].buildTools.map((t) => t.name));
    expect([...rows].sort()).toEqual([...NODE_BUILD_TOOLS].sort());
    const chooses: Record<string, Manager> = Object.fromEntries(NODE_BUILD_TOOLS.map((t) => [t, managerOfTool(t).manager]));
    expect(chooses).toEqual({
      bun: 'bun',
      npm: 'npm',
      'npm-install': 'npm',
      'npm-ci': 'npm',
      pnpm: 'pnpm',
      'yarn-berry': 'yarn-berry',
      custom: 'custom',
      yarn: 'yarn',
      yarn2: 'yarn-berry',
    });
    expect(DEFAULT_MANAGER).toBe('npm');
  });

  it('lock files pick a manager in the order yarn.lock, pnpm-lock.yaml, bun.lock (node rule 5)', () => {
    const ranked = MANAGERS.filter((m) => PACKAGE_MANAGERS[m].lockRank !== undefined).sort(
      (a, b) => PACKAGE_MANAGERS[a].lockRank! - PACKAGE_MANAGERS[b].lockRank!,
    );
    expect(ranked.flatMap((m) => PACKAGE_MANAGERS[m].lockFiles)).toEqual(['yarn.lock', 'pnpm-lock.yaml', 'bun.lock', 'bun.lockb']);
    // yarn.lock is Yarn 1's unless packageManager names Yarn 2 or later.
    expect(managerNamedBy({ name: 'yarn', version: '1.22.19' })).toBe('yarn');
    expect(managerNamedBy({ name: 'yarn', version: '3.8.7' })).toBe('yarn-berry');
  });

  it('installs with the commands of rules 4 and 8: each tool its install, the dev flag of the table, its frozen mode', () => {
    const choice = (tool: (typeof NODE_BUILD_TOOLS)[number]) => ({ tool, manager: managerOfTool(tool).manager, because: 'x' });
    const withDev = (tool: (typeof NODE_BUILD_TOOLS)[number]) => installCommand(choice(tool), { dev: { choice: 'install', nodeEnv: 'production' } }).argv;
    expect(withDev('npm')).toEqual(['npm', 'install', '--production=false']);
    expect(withDev('npm-install')).toEqual(['npm', 'install', '--production=false']);
    expect(withDev('npm-ci')).toEqual(['npm', 'ci', '--include=dev']);
    expect(withDev('pnpm')).toEqual(['pnpm', 'install', '--prod', 'false']);
    expect(withDev('yarn')).toEqual(['yarn', 'install', '--production=false']);
    expect(withDev('bun')).toEqual(['bun', 'install']);
    const locked = (tool: (typeof NODE_BUILD_TOOLS)[number]) => installCommand(choice(tool), { locked: true }).argv;
    expect(MANAGERS.filter((m) => PACKAGE_MANAGERS[m].lockRank !== undefined).map((m) => locked(PACKAGE_MANAGERS[m].buildTools[0]!.name))).toEqual([
      ['pnpm', 'install', '--frozen-lockfile'],
      ['yarn', 'install', '--frozen-lockfile'],
      ['bun', 'install', '--frozen-lockfile'],
    ]);
    expect(locked('yarn-berry')).toEqual(['yarn', 'install', '--immutable']);
  });

  it('versions of rule 7 and "Versioning": Yarn 1.22.22 by default, 4.x with yarn-berry, Bun 1.3.14; packageManager wins', () => {
    const v = (m: Manager, pm?: { name: 'yarn' | 'pnpm' | 'bun'; version: string }) =>
      PACKAGE_MANAGERS[m].version!({ tool: PACKAGE_MANAGERS[m].buildTools[0]!.name, pm }).constraint;
    expect(v('yarn')).toBe('1.22.22');
    expect(v('yarn-berry')).toBe('4');
    expect(v('bun')).toBe('1.3.14');
    expect(v('pnpm', { name: 'pnpm', version: '9.15.0' })).toBe('9.15.0');
    expect(v('yarn-berry', { name: 'yarn', version: '4.9.1' })).toBe('4.9.1');
    // Yarn is on every build PATH (rule 7): the one entry that says so is Yarn 1, the system default.
    expect(MANAGERS.filter((m) => PACKAGE_MANAGERS[m].onEveryBuildPath)).toEqual(['yarn']);
  });

  it('Bun is the runtime too (rule 4): the one runtime of the table, started by its own program', () => {
    const runtimes = MANAGERS.filter((m) => PACKAGE_MANAGERS[m].runtime);
    expect(runtimes).toEqual(['bun']);
    const bun = appRuntime('bun')!;
    expect(bun.startScript[0]).toBe(PACKAGE_MANAGERS.bun.tool!.command);
    expect(appRuntime('node')).toBeUndefined();
  });

  it('Yarn: classic hands over to a Berry release at yarnPath; only Berry prunes dev dependencies after installing', () => {
    expect(MANAGERS.filter((m) => PACKAGE_MANAGERS[m].yarn)).toEqual(['yarn', 'yarn-berry']);
    expect(PACKAGE_MANAGERS.yarn.yarnPathRunsAs).toBe('yarn-berry');
    expect(PACKAGE_MANAGERS[PACKAGE_MANAGERS.yarn.yarnPathRunsAs!].yarn).toBe('berry');
    expect(MANAGERS.filter((m) => PACKAGE_MANAGERS[m].install?.pruneDev)).toEqual(['yarn-berry']);
  });
});
