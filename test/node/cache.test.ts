/**
 * The dependencies layer is reused when nothing it depends on changed (no install runs), and rebuilt
 * with the reason logged when the lock file or the dev-dependency choice changes; the runtime layer is
 * reused per version. A token given to the build never reaches the output or the cache.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { copyFixture, rbp, tmpDir } from '../helpers/rbp.ts';
import { cacheFrom, envArgs, seedCache } from './driver.ts';

let work: string;
let app: string;
let cache: string;
const out = () => path.join(work, 'out');
const build = (env: Record<string, string> = {}) => rbp(['build', app, '--out', out(), '--type', 'node', '--cache', cache, ...envArgs(env)]);

beforeAll(async () => {
  work = tmpDir('rbp-node-cache-');
  cache = await cacheFrom(await seedCache(work), path.join(work, 'cache'));
  app = copyFixture('node-npm-lock');
}, 300_000);
afterAll(() => fs.promises.rm(work, { recursive: true, force: true }), 300_000);

it('reuses, then reinstalls for the reason that changed', async () => {
  const first = await build();
  expect(first.exitCode, first.all).toBe(0);
  expect(first.all).toContain('installing dependencies (no previous layer)');
  expect(first.all).toContain('reused node 24.15.0 (cached)');
  const sbomFile = () => path.join(out(), 'layers', 'sbom', 'launch', 'rbp_node', 'modules', 'sbom.cdx.json');
  const components = () => (JSON.parse(fs.readFileSync(sbomFile(), 'utf8')) as { components: unknown[] }).components;
  const installed = components();
  expect(installed.length).toBeGreaterThan(0);

  const second = await build();
  expect(second.exitCode, second.all).toBe(0);
  // The reused layer's SBOM lists what the install listed (kept in the layer, not read again).
  expect(components()).toEqual(installed);
  expect(second.all).toMatch(/dependencies reused \(metadata unchanged: lock package-lock.json [0-9a-f]{16}, node 24.15.0, npm 11.12.1/);
  expect(second.all).not.toContain('$ npm install');
  expect(second.all).toContain('rbp/node modules: restored');

  const dev = await build({ CC_NODE_DEV_DEPENDENCIES: 'install' });
  expect(dev.exitCode, dev.all).toBe(0);
  expect(dev.all).toContain('installing dependencies (dev changed (unset (NODE_ENV=production) → install (NODE_ENV=production)))');

  const pkg = JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8'));
  pkg.dependencies['escape-html'] = '^1.0.3';
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify(pkg));
  await execa('npm', ['install', '--package-lock-only', '--no-audit', '--no-fund'], { cwd: app });
  const changed = await build({ CC_NODE_DEV_DEPENDENCIES: 'install' });
  expect(changed.exitCode, changed.all).toBe(0);
  expect(changed.all).toMatch(/installing dependencies \(lock changed \(package-lock.json [0-9a-f]{16} → package-lock.json [0-9a-f]{16}\), manifest changed/);
  expect(fs.existsSync(path.join(out(), 'workspace', 'node_modules', 'escape-html'))).toBe(true);
});

it('never keeps NPM_TOKEN in the output or the cache', async () => {
  const token = 'npm_T0kenThatMustNotLeak';
  const r = await build({ NPM_TOKEN: token });
  expect(r.exitCode, r.all).toBe(0);
  expect(r.all).not.toContain(token);
  const hits = await execa('grep', ['-rl', token, out(), cache], { reject: false });
  expect(hits.stdout).toBe('');
  expect(fs.existsSync(path.join(out(), 'workspace', '.npmrc'))).toBe(false);
});
