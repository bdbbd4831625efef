import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseTool } from '../../../lib/js-project/build-tool.ts';
import { buildPathTools, managerVersion, pnpmForLockfile } from './package-manager.ts';

function app(files: string[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-pm-'));
  for (const f of files) fs.writeFileSync(path.join(dir, f), '');
  return dir;
}

describe('the package manager version (contract, node rule 7)', () => {
  it('gives the version: packageManager, else the defaults', () => {
    const yarn1 = { tool: 'yarn', manager: 'yarn', because: 'yarn.lock' } as const;
    const berry = { tool: 'yarn-berry', manager: 'yarn-berry', because: 'x' } as const;
    expect(managerVersion(yarn1, undefined)?.constraint).toBe('1.22.22');
    expect(managerVersion(berry, undefined)?.constraint).toBe('4');
    expect(managerVersion(berry, { name: 'yarn', version: '4.9.1' })?.constraint).toBe('4.9.1');
    expect(managerVersion({ tool: 'bun', manager: 'bun', because: 'x' }, undefined)?.constraint).toBe('1.3.14');
  });
  it('yarn-berry is the latest 4.x by default; the deprecated yarn is 1.22.22 and yarn2 2.x', () => {
    const explicit = (value: string) => chooseTool(app(['pnpm-lock.yaml']), undefined, { CC_NODE_BUILD_TOOL: value });
    expect(managerVersion(explicit('yarn-berry'), undefined)?.constraint).toBe('4');
    expect(managerVersion(explicit('yarn'), undefined)?.constraint).toBe('1.22.22');
    expect(managerVersion(explicit('yarn2'), undefined)?.constraint).toBe('2');
  });
  it('yarn-berry: the release checked in at yarnPath runs, before packageManager and the default (issue 30 item 1)', () => {
    const berry = { tool: 'yarn-berry', manager: 'yarn-berry', because: 'CC_NODE_BUILD_TOOL' } as const;
    const release = { file: '.yarn/releases/yarn-2.4.3.cjs', abs: '/app/.yarn/releases/yarn-2.4.3.cjs', version: '2.4.3' };
    expect(managerVersion(berry, undefined, undefined, release)).toMatchObject({
      constraint: '2.4.3',
      release,
      because: expect.stringContaining('not looked up in the registry'),
    });
    expect(managerVersion(berry, { name: 'yarn', version: '4.9.1' }, undefined, release)?.because).toContain(
      'packageManager yarn@4.9.1 does not run: any Yarn hands over to yarnPath',
    );
    expect(managerVersion({ tool: 'yarn', manager: 'yarn', because: 'yarn.lock' }, undefined, undefined)?.constraint).toBe('1.22.22');
  });
});

describe('issue 17 and 12: build PATH tools and the pnpm of the lock file', () => {
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
});
