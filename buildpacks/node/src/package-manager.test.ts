import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseTool } from '../../../lib/js-project/build-tool.ts';
import { pnpmForLockfile } from '../../../lib/js-project/package-managers.ts';
import { buildPathTools, managerVersion } from './package-manager.ts';

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
  it('yarn-berry: the release checked in at yarnPath runs, before packageManager and the default', () => {
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
  it("without packageManager, an engines range of the manager's line gives the version: the newest release that satisfies it", () => {
    const pnpm = { tool: 'pnpm', manager: 'pnpm', because: 'x' } as const;
    const yarn1 = { tool: 'yarn', manager: 'yarn', because: 'yarn.lock' } as const;
    const berry = { tool: 'yarn-berry', manager: 'yarn-berry', because: 'x' } as const;
    const v = managerVersion(pnpm, undefined, undefined, undefined, { pnpm: '9.1.0 - 9.1.1' })!;
    expect(v).toMatchObject({
      constraint: '9.1.0 - 9.1.1',
      source: 'engines',
      because: 'engines.pnpm "9.1.0 - 9.1.1" in package.json: the newest release that satisfies it',
    });
    expect(v.engines?.field).toBe('engines.pnpm');
    // packageManager comes first; an engines range another line satisfies is not this line's.
    expect(managerVersion(pnpm, { name: 'pnpm', version: '9.15.0' }, undefined, undefined, { pnpm: '^8' })?.constraint).toBe('9.15.0');
    const y1 = managerVersion(yarn1, undefined, undefined, undefined, { yarn: '>=1.22.19' })!;
    expect(y1.constraint).toBe('>=1.22.19');
    expect([y1.engines!.accept('1.22.20'), y1.engines!.accept('2.4.3')]).toEqual([true, false]);
    expect(managerVersion(yarn1, undefined, undefined, undefined, { yarn: '>=4' })?.constraint).toBe('1.22.22');
    expect(managerVersion(berry, undefined, undefined, undefined, { yarn: '1.x' })?.constraint).toBe('4');
    expect(managerVersion(berry, undefined, undefined, undefined, { yarn: '^4.9' })?.engines?.label).toBe('Yarn 2 or later');
  });
});

describe('build PATH tools, the manager of a custom command and the pnpm of the lock file', () => {
  const npm = { tool: 'npm', manager: 'npm', because: 'x' } as const;
  const custom = (files: string[], pm?: { name: 'yarn' | 'pnpm' | 'bun'; version: string }) =>
    chooseTool(app(files), pm, { CC_NODE_BUILD_TOOL: 'custom', CC_CUSTOM_BUILD_TOOL: 'true' });
  it('puts Yarn on every build PATH (packageManager version, else 1.22.22), unless Yarn is the manager of the app', () => {
    expect(buildPathTools(npm, undefined).map((t) => [t.id, t.constraint])).toEqual([['yarn', '1.22.22']]);
    expect(buildPathTools(custom([], { name: 'yarn', version: '3.8.7' }), { name: 'yarn', version: '3.8.7' })).toEqual([]);
    expect(buildPathTools(custom(['yarn.lock']), undefined)).toEqual([]);
    expect(buildPathTools(custom(['pnpm-lock.yaml']), undefined).map((t) => [t.id, t.constraint])).toEqual([['yarn', '1.22.22']]);
    expect(buildPathTools({ tool: 'yarn-berry', manager: 'yarn-berry', because: 'x' }, undefined)).toEqual([]);
  });
  it('a custom command gets the manager packageManager names, else the one its lock file picks (rule 5), at the version rule 7 gives', () => {
    const named = custom(['yarn.lock'], { name: 'pnpm', version: '9.15.0' });
    expect(named.app).toEqual({ manager: 'pnpm', because: 'packageManager pnpm@9.15.0' });
    expect(managerVersion(named, { name: 'pnpm', version: '9.15.0' })?.constraint).toBe('9.15.0');
    for (const [lock, manager, version] of [
      ['yarn.lock', 'yarn', '1.22.22'],
      ['pnpm-lock.yaml', 'pnpm', '10'],
      ['bun.lock', 'bun', '1.3.14'],
    ] as const) {
      const c = custom([lock]);
      expect(c.app).toEqual({ manager, because: lock });
      expect(managerVersion(c, undefined)?.constraint).toBe(version);
    }
    expect(custom(['package-lock.json']).app?.manager).toBe('npm');
    expect(managerVersion(custom(['package-lock.json']), undefined)).toBeUndefined();
  });
  it('picks the pnpm major that wrote the lock file', () => {
    expect(pnpmForLockfile('5.3')?.constraint).toBe('6');
    expect(pnpmForLockfile('5.4')?.constraint).toBe('7');
    expect(pnpmForLockfile("'6.0'")?.constraint).toBe('8');
    expect(pnpmForLockfile('9.0')).toBeUndefined();
  });
});
