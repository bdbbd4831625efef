import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheEnv, installOutputs, missingDevTool } from './dependencies.ts';
import type { ToolChoice } from '../../../lib/js-project/build-tool.ts';

const CACHE = '/layers/rbp_node/package-cache';
const bun: ToolChoice = { tool: 'bun', manager: 'bun', because: 'bun.lock' };
const npm: ToolChoice = { tool: 'npm', manager: 'npm', because: 'default' };

describe('cacheEnv: BUN_INSTALL_CACHE_DIR (contract, CC_BUN_INSTALL_CACHE_DIR)', () => {
  it('is CC_BUN_INSTALL_CACHE_DIR when set', () => {
    expect(cacheEnv(CACHE, bun, { CC_BUN_INSTALL_CACHE_DIR: '/tmp/bun-cache' }, false).BUN_INSTALL_CACHE_DIR).toBe('/tmp/bun-cache');
  });
  it('is trimmed, and an empty value counts as unset', () => {
    expect(cacheEnv(CACHE, bun, { CC_BUN_INSTALL_CACHE_DIR: ' /tmp/bun-cache ' }, false).BUN_INSTALL_CACHE_DIR).toBe('/tmp/bun-cache');
    expect(cacheEnv(CACHE, bun, { CC_BUN_INSTALL_CACHE_DIR: '  ' }, false).BUN_INSTALL_CACHE_DIR).toBe(path.join(CACHE, 'bun'));
  });
  it('unset, is the bun folder of the package-cache layer (kept between builds)', () => {
    expect(cacheEnv(CACHE, bun, {}, false).BUN_INSTALL_CACHE_DIR).toBe(path.join(CACHE, 'bun'));
  });
  it('the other managers keep their caches in the layer too', () => {
    const e = cacheEnv(CACHE, npm, {}, false);
    expect(e.npm_config_cache).toBe(path.join(CACHE, 'npm'));
    expect(e.YARN_CACHE_FOLDER).toBeUndefined();
    expect(cacheEnv(CACHE, { tool: 'pnpm', manager: 'pnpm', because: 'x' }, {}, false).npm_config_store_dir).toBe(path.join(CACHE, 'pnpm-store'));
    expect(cacheEnv(CACHE, { tool: 'yarn-berry', manager: 'yarn-berry', because: 'x' }, {}, true)).toMatchObject({ YARN_ENABLE_GLOBAL_CACHE: 'false' });
  });
});

describe('installOutputs', () => {
  it("is node_modules, or the Plug'n'Play files", () => {
    expect(installOutputs(false)).toEqual(['node_modules']);
    expect(installOutputs(true)).toContain('.pnp.cjs');
  });
});

describe('missingDevTool', () => {
  const pkg = { devDependencies: { nuxt: '^3', typescript: '^5', '@scope/semver': '1' } };
  it('finds the development dependency that provides a command the shell did not find', () => {
    expect(missingDevTool(pkg, '> postinstall\n> nuxt prepare\n\nsh: 1: nuxt: not found\nnpm error code 127')).toEqual({ command: 'nuxt', dependency: 'nuxt' });
    expect(missingDevTool(pkg, '/bin/sh: line 1: tsc: command not found')).toEqual({ command: 'tsc', dependency: 'typescript' });
    expect(missingDevTool(pkg, 'error: command not found: semver')).toEqual({ command: 'semver', dependency: '@scope/semver' });
  });
  it('says nothing for a command no development dependency provides', () => {
    expect(missingDevTool(pkg, 'sh: 1: make: not found')).toBeUndefined();
    expect(missingDevTool({}, 'sh: 1: nuxt: not found')).toBeUndefined();
  });
});
