/**
 * CC_BUN_INSTALL_CACHE_DIR end to end: a real `bun install` (fixtures/node-bun) downloads its packages
 * into the folder the variable names, not into the package-cache layer.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FIXTURES, envArgs, rbp, tmpDir } from '../helpers/rbp.ts';

let work: string;
beforeAll(() => {
  work = tmpDir('rbp-node-bun-cache-');
});
afterAll(() => fs.promises.rm(work, { recursive: true, force: true }), 60_000);

it('bun install uses CC_BUN_INSTALL_CACHE_DIR as its cache', async () => {
  const bunCache = path.join(work, 'bun-cache');
  const cache = path.join(work, 'cache');
  const r = await rbp([
    'build',
    path.join(FIXTURES, 'node-bun'),
    '--out',
    path.join(work, 'out'),
    '--type',
    'node',
    '--cache',
    cache,
    ...envArgs({ CC_BUN_INSTALL_CACHE_DIR: bunCache }),
  ]);
  expect(r.exitCode, r.all).toBe(0);
  expect(r.all).toContain('$ bun install --omit dev');
  expect(fs.readdirSync(bunCache).filter((e) => e.startsWith('ms@2.1.'))).not.toEqual([]);
  expect(fs.existsSync(path.join(cache, 'rbp_node', 'package-cache', 'bun'))).toBe(false);
}, 300_000);
