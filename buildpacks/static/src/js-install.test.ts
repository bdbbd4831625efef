import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Layers } from '../../../lib/cnb/layers.ts';
import { installPlan, nodeModulesCache } from './js-install.ts';

function app(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-js-'));
  for (const [f, c] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), c);
  return dir;
}

describe('JavaScript generator installs', () => {
  it('use the project lock file, else the contract npm i', () => {
    expect(installPlan(app({ 'package.json': '{}' })).argv).toEqual(['npm', 'i']);
    expect(installPlan(app({ 'package-lock.json': '{}' })).argv).toEqual(['npm', 'ci']);
    expect(installPlan(app({ 'pnpm-lock.yaml': '' })).argv).toEqual(['corepack', 'pnpm', 'install', '--frozen-lockfile']);
    expect(installPlan(app({ 'yarn.lock': '', 'package.json': '{}' })).argv).toEqual(['corepack', 'yarn', 'install', '--frozen-lockfile']);
    expect(installPlan(app({ 'yarn.lock': '', 'package.json': '{"packageManager":"yarn@4.9.1"}' })).argv).toEqual([
      'corepack',
      'yarn',
      'install',
      '--immutable',
    ]);
    expect(installPlan(app({ 'bun.lock': '' })).argv).toEqual(['bun', 'install', '--frozen-lockfile']);
  });

  it('tells Yarn Berry apart as node does (rule 5): packageManager yarn@2 or later, or yarnPath; not a bare .yarnrc.yml', () => {
    expect(installPlan(app({ 'yarn.lock': '', '.yarnrc.yml': 'nodeLinker: node-modules\n', 'package.json': '{}' })).argv).toEqual([
      'corepack',
      'yarn',
      'install',
      '--frozen-lockfile',
    ]);
    expect(installPlan(app({ 'yarn.lock': '', '.yarnrc.yml': 'yarnPath: .yarn/releases/yarn-4.9.1.cjs\n', 'package.json': '{}' })).argv).toEqual([
      'corepack',
      'yarn',
      'install',
      '--immutable',
    ]);
    expect(installPlan(app({ 'yarn.lock': '', 'package.json': '{"packageManager":"yarn@3.8.7"}' })).argv).toEqual([
      'corepack',
      'yarn',
      'install',
      '--immutable',
    ]);
    // A packageManager node would refuse is only weighed here: corepack says what is wrong with it.
    expect(installPlan(app({ 'package-lock.json': '{}', 'package.json': '{"packageManager":"npm@^10"}' })).argv).toEqual(['npm', 'ci']);
  });

  it('weighs lock files in the node runtime order (rule 5): yarn.lock, pnpm-lock.yaml, bun.lock, then npm', () => {
    expect(installPlan(app({ 'package-lock.json': '{}', 'yarn.lock': '', 'package.json': '{}' })).lockFile).toBe('yarn.lock');
    expect(installPlan(app({ 'package-lock.json': '{}', 'pnpm-lock.yaml': '' })).lockFile).toBe('pnpm-lock.yaml');
    expect(installPlan(app({ 'package-lock.json': '{}', 'bun.lock': '' })).lockFile).toBe('bun.lock');
    expect(installPlan(app({ 'pnpm-lock.yaml': '', 'yarn.lock': '', 'package.json': '{}' })).lockFile).toBe('yarn.lock');
  });

  it('keep node_modules between builds while the lock file is unchanged', () => {
    const layersDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-layers-'));
    const a = app({ 'package.json': '{"name":"a"}' });
    const plan = installPlan(a);
    const first = nodeModulesCache(new Layers(layersDir), a, plan, '24.15.0');
    expect(first.restored).toBe(false);
    fs.mkdirSync(path.join(a, 'node_modules/pkg'), { recursive: true });
    fs.writeFileSync(path.join(a, 'node_modules/pkg/index.js'), 'x');
    first.keep();
    expect(fs.existsSync(path.join(a, 'node_modules'))).toBe(false);

    const b = app({ 'package.json': '{"name":"a"}' });
    const second = nodeModulesCache(new Layers(layersDir), b, installPlan(b), '24.15.0');
    expect(second).toMatchObject({ restored: true, reason: 'package.json unchanged' });
    expect(fs.readFileSync(path.join(b, 'node_modules/pkg/index.js'), 'utf8')).toBe('x');
    second.keep();

    // Another Node.js (engines.node changed): installed again, its native modules built for it.
    const d = app({ 'package.json': '{"name":"a"}' });
    const other = nodeModulesCache(new Layers(layersDir), d, installPlan(d), '22.12.0');
    expect(other.restored).toBe(false);
    expect(other.reason).toMatch(/node changed/);
    other.keep();

    const c = app({ 'package.json': '{"name":"a","dependencies":{"x":"1"}}' });
    const third = nodeModulesCache(new Layers(layersDir), c, installPlan(c), '22.12.0');
    expect(third.restored).toBe(false);
    expect(third.reason).toMatch(/package\.json changed/);
  });
});
