/**
 * The node runtime's part of the fixture tests: a warm cache (seeded once per test file), and the
 * fixtures/node-* apps run case by case by the one driver (test/helpers/fixture-driver.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { fixtureSuite as driverSuite } from '../helpers/fixture-driver.ts';
import { FIXTURES, rbp } from '../helpers/rbp.ts';
import type { Case } from '../helpers/fixture-spec.ts';

export { envArgs, serve, type Served } from '../helpers/rbp.ts';

export { httpChecks } from '../helpers/fixture-driver.ts';

/** A cache holding Node.js 24.15.0 and npm from one cold build of fixtures/node-hello. */
export async function seedCache(work: string): Promise<string> {
  const seed = path.join(work, 'seed-cache');
  const r = await rbp(['build', path.join(FIXTURES, 'node-hello'), '--out', path.join(work, 'seed-out'), '--type', 'node', '--cache', seed]);
  if (r.exitCode !== 0) throw new Error(`seed build failed:\n${r.all}`);
  for (const l of ['modules', 'package-cache']) {
    fs.rmSync(path.join(seed, 'rbp_node', l), { recursive: true, force: true });
    fs.rmSync(path.join(seed, 'rbp_node', `${l}.toml`), { force: true });
  }
  fs.rmSync(path.join(work, 'seed-out'), { recursive: true, force: true });
  return seed;
}

export async function cacheFrom(seed: string, dir: string): Promise<string> {
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  await execa('cp', ['-al', seed, dir]);
  return dir;
}

/**
 * Bun's shared /tmp/bun-node-<revision>/ folders whose links point into `work` (made by the Bun apps
 * these tests ran): removed with `work`, so that no dangling link is left for other programs.
 */
export function forgetBunLinks(work: string): void {
  for (const d of fs.readdirSync('/tmp').filter((n) => n.startsWith('bun-node-'))) {
    const dir = path.join('/tmp', d);
    try {
      if (fs.readlinkSync(path.join(dir, 'node')).startsWith(work + path.sep)) fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // not a Bun folder, or not ours
    }
  }
}

/**
 * The node fixtures through the one driver (test/helpers/fixture-driver.ts): Node.js and npm come
 * from a cache seeded once per test file by a cold build, hard-linked into each case's own cache, as
 * a warm builder would have. A case whose build must fail starts cold: bad input fails before
 * anything is installed (warmFailure names those that fail after the install).
 */
export function fixtureSuite(names: string[], opts: { warmFailure?: (c: Case) => boolean } = {}): void {
  let seed: string;
  let work: string;
  driverSuite(names, {
    type: 'node',
    setup: async (w) => {
      work = w;
      seed = await seedCache(w);
    },
    teardown: () => forgetBunLinks(work),
    // warmFailure: a case that fails after the install (a check of what was installed) starts warm too.
    cache: (c, dir) => (c.expect.build === 'fail' && !opts.warmFailure?.(c) ? dir : cacheFrom(seed, dir)),
  });
}
