/**
 * `rbp prune`: what it removes, with the space each removal frees, what it keeps and why; --dry-run
 * removes nothing; an OUT a running app uses is never touched. The folders are laid out as rbp
 * leaves them (OUT with its marker and rbp.toml, the cache beside it, rbp's record of it, download
 * cache entries); test/reliability/download-cache.test.ts prunes after real builds.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../lib/platform/cli.ts';
import { markInUse } from '../../lib/platform/in-use.ts';
import { recordOut } from '../../lib/platform/out-registry.ts';
import { applyPrune, planPrune } from '../../lib/platform/prune.ts';
import { tmpDir } from '../helpers/rbp.ts';

const MiB = 1024 * 1024;

function file(p: string, bytes: number): void {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, Buffer.alloc(bytes, 1));
}

/** An OUT as a build leaves it, its cache beside it, recorded for `xdg`. */
function builtOut(out: string, app: string, env: NodeJS.ProcessEnv): void {
  file(path.join(out, '.rbp-out'), 0);
  file(path.join(out, 'rbp.toml'), 10);
  file(path.join(out, 'layers', 'rbp_node', 'modules', 'big'), 2 * MiB);
  // The cache's folder of a launch layer is a second name for OUT's files.
  fs.mkdirSync(path.join(`${out}.rbp-cache`, 'rbp_node', 'modules'), { recursive: true });
  fs.linkSync(path.join(out, 'layers', 'rbp_node', 'modules', 'big'), path.join(`${out}.rbp-cache`, 'rbp_node', 'modules', 'big'));
  file(path.join(`${out}.rbp-cache`, 'rbp_node', 'package-cache', 'c'), 1 * MiB);
  recordOut({ out, app, cache: `${out}.rbp-cache`, cacheBeside: true, built: new Date().toISOString() }, env);
}

/** A download cache entry; `linkedFrom` makes a layer use it. */
function entry(root: string, id: string, version: string, linkedFrom?: string): string {
  const dir = path.join(root, id, `${version}-amd64-0123456789abcdef`);
  file(path.join(dir, 'tree', 'bin', id), 3 * MiB);
  fs.writeFileSync(
    path.join(dir, 'entry.json'),
    JSON.stringify({ id, version, arch: 'amd64', uri: 'x', verified: [], digest: 'd', bytes: 3 * MiB, created: '' }),
  );
  if (linkedFrom) {
    fs.mkdirSync(linkedFrom, { recursive: true });
    fs.linkSync(path.join(dir, 'tree', 'bin', id), path.join(linkedFrom, id));
  }
  return dir;
}

describe('rbp prune', () => {
  const setup = () => {
    const xdg = tmpDir('rbp-prune-xdg-');
    const downloads = path.join(xdg, 'rbp', 'downloads');
    const env = { ...process.env, XDG_CACHE_HOME: xdg, RBP_DOWNLOAD_CACHE: downloads };
    const app = tmpDir('rbp-prune-app-');
    const kept = path.join(tmpDir('rbp-prune-'), 'kept'); // an OUT still there
    const gone = path.join(tmpDir('rbp-prune-'), 'gone'); // an OUT the user removed
    const deployed = path.join(xdg, 'rbp', 'deploy', 'old-app-12345678'); // a deploy of an app that is gone
    builtOut(kept, app, env);
    builtOut(gone, app, env);
    fs.rmSync(gone, { recursive: true });
    builtOut(deployed, path.join(app, 'removed-app'), env);
    // What a build killed after it completed OUT left: the previous OUT beside a complete one.
    file(path.join(`${kept}.rbp-previous`, 'rbp.toml'), MiB);
    const used = entry(downloads, 'node', '24.15.0', path.join(kept, 'layers', 'rbp_node', 'node'));
    const unused = entry(downloads, 'node', '22.1.0');
    file(path.join(downloads, '.incoming', '999999999-abcd', 'tree', 'half'), MiB);
    return { env, kept, gone, deployed, used, unused, downloads };
  };

  it('lists each removal with the space it frees; --dry-run removes nothing, then prune does', async () => {
    const s = setup();
    const plan = planPrune({ env: s.env });
    const removed = Object.fromEntries(plan.remove.map((i) => [i.path, i]));
    // The gone OUT's cache and record; the deploy of a gone app, whole; the previous OUT beside a complete one.
    expect(Object.keys(removed)).toEqual(
      expect.arrayContaining([
        `${s.gone}.rbp-cache`,
        s.deployed,
        `${s.deployed}.rbp-cache`,
        `${s.kept}.rbp-previous`,
        s.unused,
        path.join(s.downloads, '.incoming', '999999999-abcd'),
      ]),
    );
    expect(Object.keys(removed)).not.toContain(s.kept);
    expect(Object.keys(removed)).not.toContain(s.used);
    expect(plan.kept).toContainEqual({ path: s.used, why: 'node 24.15.0: used by layers' });
    // Sizes are what goes: the unused entry's 3 MiB; the gone OUT's cache held the last name of its 2 MiB file.
    expect(removed[s.unused]!.bytes).toBeGreaterThanOrEqual(3 * MiB);
    expect(removed[`${s.gone}.rbp-cache`]!.bytes).toBeGreaterThanOrEqual(3 * MiB);
    expect(removed[`${s.kept}.rbp-previous`]!.bytes).toBeGreaterThanOrEqual(MiB);
    expect(plan.freed).toBeGreaterThanOrEqual(3 * MiB + 3 * MiB + 3 * MiB + 1 * MiB);

    // The command: --dry-run shows the same and removes nothing.
    let out = '';
    const sink = (f: (t: string) => void) =>
      new Writable({
        write: (c, _e, cb) => {
          f(String(c));
          cb();
        },
      });
    const saved = { ...process.env };
    Object.assign(process.env, { XDG_CACHE_HOME: s.env.XDG_CACHE_HOME, RBP_DOWNLOAD_CACHE: s.env.RBP_DOWNLOAD_CACHE, NO_COLOR: '1' });
    try {
      expect(await main(['prune', '--dry-run'], { stdout: sink((t) => (out += t)), stderr: sink((t) => (out += t)) })).toBe(0);
      expect(out).toContain('## Prune (dry run: nothing is removed)');
      expect(out).toMatch(new RegExp(`- would remove ${s.unused.replace(/[.*+?^$()|[\]\\]/g, '\\$&')} \\(3\\.\\d MiB\\): node 22\\.1\\.0: no layer uses it`));
      expect(out).toMatch(/- would free \d+\.\d MiB \(run rbp prune without --dry-run to remove them\)/);
      expect(fs.existsSync(s.unused) && fs.existsSync(s.deployed)).toBe(true);

      out = '';
      expect(await main(['prune'], { stdout: sink((t) => (out += t)), stderr: sink((t) => (out += t)) })).toBe(0);
      expect(out).toMatch(/- freed \d+\.\d MiB/);
    } finally {
      for (const k of ['XDG_CACHE_HOME', 'RBP_DOWNLOAD_CACHE', 'NO_COLOR']) if (saved[k] === undefined) delete process.env[k];
      Object.assign(process.env, saved);
    }
    for (const p of [s.unused, s.deployed, `${s.deployed}.rbp-cache`, `${s.gone}.rbp-cache`, `${s.kept}.rbp-previous`]) expect(fs.existsSync(p), p).toBe(false);
    for (const p of [s.kept, `${s.kept}.rbp-cache`, s.used]) expect(fs.existsSync(p), p).toBe(true);
    // What is left needs nothing more.
    expect(planPrune({ env: s.env }).remove).toEqual([]);
  });

  it('never touches an OUT a running rbp run or deploy uses; --caches takes the caches of the others', () => {
    const s = setup();
    markInUse(s.kept); // this test's own process stands for the running app
    const plan = planPrune({ env: s.env, caches: true });
    expect(plan.kept).toContainEqual({ path: s.kept, why: `in use by rbp run or deploy (process ${process.pid})` });
    expect(plan.remove.filter((i) => i.path.startsWith(s.kept))).toEqual([]);
    expect(applyPrune(plan, s.env)).toEqual([]);
    expect(fs.existsSync(`${s.kept}.rbp-previous`) && fs.existsSync(`${s.kept}.rbp-cache`)).toBe(true);
    // Once it ends (its mark gone), --caches takes its cache too.
    fs.rmSync(`${s.kept}.rbp-run`, { recursive: true });
    const after = planPrune({ env: s.env, caches: true });
    expect(after.remove.map((i) => i.path)).toEqual(expect.arrayContaining([`${s.kept}.rbp-cache`, `${s.kept}.rbp-previous`]));
  });
});
