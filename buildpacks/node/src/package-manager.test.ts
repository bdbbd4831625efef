import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderUserError, type UserError } from '../../../lib/errors.ts';
import { buildPathTools, chooseTool, devDependenciesChoice, installCommand, managerVersion, parsePackageManager, pnpmForLockfile, yarnPathOf } from './package-manager.ts';

function app(files: string[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-pm-'));
  for (const f of files) fs.writeFileSync(path.join(dir, f), '');
  return dir;
}

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return renderUserError((e as UserError).data);
  }
  throw new Error('no error');
}

describe('chooseTool (contract, node rule 5)', () => {
  it('follows the lock file priority yarn.lock → pnpm-lock.yaml → bun.lock, else npm', () => {
    expect(chooseTool(app(['yarn.lock', 'pnpm-lock.yaml', 'bun.lock']), {}, {}).tool).toBe('yarn');
    expect(chooseTool(app(['pnpm-lock.yaml', 'bun.lock']), {}, {}).tool).toBe('pnpm');
    expect(chooseTool(app(['bun.lock', 'package-lock.json']), {}, {}).tool).toBe('bun');
    expect(chooseTool(app(['package-lock.json']), {}, {}).tool).toBe('npm');
  });
  it('takes Yarn Berry with yarn.lock and packageManager yarn@3 or yarn@4; Yarn 1 and 2 are deprecated', () => {
    expect(chooseTool(app(['yarn.lock']), { packageManager: 'yarn@4.9.1' }, {}).tool).toBe('yarn-berry');
    expect(chooseTool(app(['yarn.lock']), { packageManager: 'yarn@3.8.7' }, {}).tool).toBe('yarn-berry');
    expect(chooseTool(app(['yarn.lock']), { packageManager: 'yarn@2.4.3' }, {}).deprecated).toMatch(/Yarn 2.x is deprecated/);
    expect(chooseTool(app(['yarn.lock']), {}, {}).deprecated).toMatch(/Yarn 1.x is deprecated/);
  });
  it('CC_NODE_BUILD_TOOL wins over the lock files', () => {
    expect(chooseTool(app(['yarn.lock']), {}, { CC_NODE_BUILD_TOOL: 'npm-ci' })).toMatchObject({ tool: 'npm-ci', manager: 'npm', because: 'CC_NODE_BUILD_TOOL' });
  });
  it('refuses an unknown value, listing the valid ones', () => {
    expect(errorOf(() => chooseTool(app([]), {}, { CC_NODE_BUILD_TOOL: 'gradle' }))).toMatchInlineSnapshot(`
      "! ERROR CC_NODE_BUILD_TOOL names no known package manager
      !
      ! Seen: CC_NODE_BUILD_TOOL: "gradle" (the application environment)
      ! Rule: CC_NODE_BUILD_TOOL is one of bun, npm, npm-install, npm-ci, pnpm, yarn-berry, custom (deprecated: yarn, yarn2).
      ! Fix:  Set CC_NODE_BUILD_TOOL to one of those values, or unset it to detect the package manager from the lock file.
      ! (error id: node/build-tool/unknown)"
    `);
  });
});

describe('packageManager', () => {
  it('parses name, version and hash', () => {
    expect(parsePackageManager({ packageManager: 'pnpm@10.12.1+sha512.ABCdef' })).toEqual({ name: 'pnpm', version: '10.12.1', hash: { algorithm: 'sha512', hex: 'abcdef' } });
    expect(parsePackageManager({})).toBeUndefined();
  });
  it('refuses a range', () => {
    expect(errorOf(() => parsePackageManager({ packageManager: 'pnpm@^10' }))).toContain('node/package-manager/field-invalid');
  });
  it('gives the version: packageManager, else the defaults', () => {
    const yarn1 = { tool: 'yarn', manager: 'yarn', because: 'yarn.lock' } as const;
    const berry = { tool: 'yarn-berry', manager: 'yarn-berry', because: 'x' } as const;
    expect(managerVersion(yarn1, undefined)?.constraint).toBe('1.22.22');
    expect(managerVersion(berry, undefined)?.constraint).toBe('4');
    expect(managerVersion(berry, { name: 'yarn', version: '4.9.1' })?.constraint).toBe('4.9.1');
    expect(managerVersion({ tool: 'bun', manager: 'bun', because: 'x' }, undefined)?.constraint).toBe('1.3.14');
  });
});

describe('installCommand (contract, node rule 8)', () => {
  const c = (tool: string) => ({ tool, manager: tool.startsWith('npm') ? 'npm' : tool, because: 'x' }) as Parameters<typeof installCommand>[0];
  it('adds the explicit flag with CC_NODE_DEV_DEPENDENCIES=install', () => {
    expect(installCommand(c('npm'), 'install', 'production', {}).argv).toContain('--production=false');
    expect(installCommand(c('npm-ci'), 'install', 'production', {}).argv).toContain('--include=dev');
    expect(installCommand(c('pnpm'), 'install', 'production', {}).argv.join(' ')).toContain('--prod false');
    expect(installCommand(c('yarn'), 'install', 'production', {}).argv).toContain('--production=false');
    expect(installCommand(c('bun'), 'install', 'production', {}).argv).toEqual(['bun', 'install']);
  });
  it('unset or ignore: Bun omits dev, the others follow NODE_ENV', () => {
    expect(installCommand(c('bun'), 'unset', 'development', {}).argv).toEqual(['bun', 'install', '--omit', 'dev']);
    expect(installCommand(c('npm'), 'ignore', 'production', {}).dev).toBe('excluded');
    expect(installCommand(c('npm'), 'unset', 'development', {}).dev).toBe('included');
    expect(installCommand(c('yarn-berry'), 'unset', 'production', {}).then).toEqual(['yarn', 'workspaces', 'focus', '--all', '--production']);
  });
  it('rejects other CC_NODE_DEV_DEPENDENCIES values', () => {
    expect(devDependenciesChoice({})).toBe('unset');
    expect(errorOf(() => devDependenciesChoice({ CC_NODE_DEV_DEPENDENCIES: 'yes' }))).toContain('config/CC_NODE_DEV_DEPENDENCIES/invalid');
  });
});

describe('explicit CC_NODE_BUILD_TOOL values (contract, node rule 4)', () => {
  // A lock file of another manager is present each time: the variable wins over detection.
  const explicit = (value: string) => chooseTool(app(['pnpm-lock.yaml']), {}, { CC_NODE_BUILD_TOOL: value });
  it('bun uses Bun as package manager, omitting dev dependencies by default', () => {
    const c = explicit('bun');
    expect(c).toEqual({ tool: 'bun', manager: 'bun', because: 'CC_NODE_BUILD_TOOL' });
    expect(installCommand(c, 'unset', 'production', {}).argv).toEqual(['bun', 'install', '--omit', 'dev']);
  });
  it('npm and npm-install both use npm install', () => {
    for (const v of ['npm', 'npm-install']) {
      const c = explicit(v);
      expect(c).toEqual({ tool: v, manager: 'npm', because: 'CC_NODE_BUILD_TOOL' });
      expect(installCommand(c, 'unset', 'production', {}).argv).toEqual(['npm', 'install', '--no-audit', '--no-fund']);
    }
  });
  it('pnpm uses pnpm', () => {
    const c = explicit('pnpm');
    expect(c).toEqual({ tool: 'pnpm', manager: 'pnpm', because: 'CC_NODE_BUILD_TOOL' });
    expect(installCommand(c, 'unset', 'production', {}).argv).toEqual(['pnpm', 'install', '--prod']);
  });
  it('yarn-berry uses Yarn Berry, latest 4.x by default, without a deprecation', () => {
    const c = explicit('yarn-berry');
    expect(c).toEqual({ tool: 'yarn-berry', manager: 'yarn-berry', because: 'CC_NODE_BUILD_TOOL' });
    expect(managerVersion(c, undefined)?.constraint).toBe('4');
    expect(installCommand(c, 'unset', 'production', {}).argv).toEqual(['yarn', 'install']);
  });
  it('the deprecated yarn is accepted: Yarn 1.22.22 with the deprecation warning', () => {
    const c = explicit('yarn');
    expect(c).toMatchObject({ tool: 'yarn', manager: 'yarn', because: 'CC_NODE_BUILD_TOOL' });
    expect(c.deprecated).toMatch(/^Yarn 1\.x is deprecated/);
    expect(managerVersion(c, undefined)?.constraint).toBe('1.22.22');
    expect(installCommand(c, 'unset', 'production', {}).argv).toEqual(['yarn', 'install', '--non-interactive']);
  });
  it('the deprecated yarn2 is accepted: Yarn 2.x through Berry, with the deprecation warning', () => {
    const c = explicit('yarn2');
    expect(c).toMatchObject({ tool: 'yarn2', manager: 'yarn-berry', because: 'CC_NODE_BUILD_TOOL' });
    expect(c.deprecated).toMatch(/^Yarn 2\.x is deprecated/);
    expect(managerVersion(c, undefined)?.constraint).toBe('2');
  });
});

describe('issue 17 and 12: build PATH tools, locked installs, Yarn 2/3 and yarnPath', () => {
  const npm = { tool: 'npm', manager: 'npm', because: 'x' } as const;
  const custom = { tool: 'custom', manager: 'custom', because: 'x' } as const;
  it('puts Yarn on every build PATH: packageManager version, else 1.22.22; a custom command gets pnpm or Bun from packageManager', () => {
    expect(buildPathTools(npm, undefined).map((t) => [t.id, t.constraint])).toEqual([['yarn', '1.22.22']]);
    expect(buildPathTools(custom, { name: 'yarn', version: '3.8.7' }).map((t) => [t.id, t.constraint])).toEqual([['yarn-berry', '3.8.7']]);
    expect(buildPathTools(custom, { name: 'pnpm', version: '9.15.0' }).map((t) => [t.id, t.constraint])).toEqual([
      ['yarn', '1.22.22'],
      ['pnpm', '9.15.0'],
    ]);
    expect(buildPathTools({ tool: 'yarn-berry', manager: 'yarn-berry', because: 'x' }, undefined)).toEqual([]);
  });
  it('picks the pnpm major that wrote the lock file', () => {
    expect(pnpmForLockfile('5.3')?.constraint).toBe('6');
    expect(pnpmForLockfile('5.4')?.constraint).toBe('7');
    expect(pnpmForLockfile("'6.0'")?.constraint).toBe('8');
    expect(pnpmForLockfile('9.0')).toBeUndefined();
  });
  it('installs in each tool CI mode when a lock file is there', () => {
    const c = (tool: string) => ({ tool, manager: tool, because: 'x' }) as Parameters<typeof installCommand>[0];
    expect(installCommand(c('pnpm'), 'unset', 'production', {}, { locked: true }).argv).toEqual(['pnpm', 'install', '--prod', '--frozen-lockfile']);
    expect(installCommand(c('yarn'), 'unset', 'production', {}, { locked: true }).argv).toContain('--frozen-lockfile');
    expect(installCommand(c('bun'), 'unset', 'production', {}, { locked: true }).argv).toEqual(['bun', 'install', '--omit', 'dev', '--frozen-lockfile']);
    const berry3 = installCommand(c('yarn-berry'), 'unset', 'production', {}, { locked: true, berryMajor: 3 });
    expect(berry3).toMatchObject({ argv: ['yarn', 'install', '--immutable'], berryStripDev: true });
    expect(berry3.then).toBeUndefined();
    expect(installCommand(c('yarn-berry'), 'unset', 'production', {}, { berryMajor: 4 }).then).toEqual(['yarn', 'workspaces', 'focus', '--all', '--production']);
  });
  it('treats a yarn.lock project pinned by yarnPath as Yarn Berry', () => {
    const dir = app(['yarn.lock']);
    fs.writeFileSync(path.join(dir, '.yarnrc.yml'), 'nodeLinker: node-modules\nyarnPath: .yarn/releases/yarn-3.8.7.cjs\n');
    expect(yarnPathOf(dir)).toEqual({ file: '.yarn/releases/yarn-3.8.7.cjs', version: '3.8.7' });
    const choice = chooseTool(dir, {}, {});
    expect(choice).toMatchObject({ tool: 'yarn-berry', manager: 'yarn-berry' });
    expect(managerVersion(choice, undefined, dir)?.constraint).toBe('3.8.7');
  });
});
