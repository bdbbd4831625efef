/**
 * The shared download cache, with real builds: four builds of
 * different node apps start at once on one empty download cache; the first is killed (rbp and its
 * buildpack, SIGKILL, as a power cut would) while it downloads Node.js, holding that entry's lock.
 * The other three wait for the lock to turn stale, one of them downloads, the others link: every
 * tool is downloaded once, no entry is partial, every build runs, and `rbp prune` then removes
 * what the killed build left and keeps what layers use. The killed build's next run recovers.
 */
import { execa, type ResultPromise } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEntry } from '../../lib/deps/download-cache.ts';
import { scanTree } from '../../lib/tree-digest.ts';
import { freePort, RBP, rbp, tmpDir } from '../helpers/rbp.ts';

function nodeApp(i: number): string {
  const dir = tmpDir(`rbp-dc-app${i}-`);
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `app-${i}`, private: true, scripts: { start: 'node server.js' } }));
  fs.writeFileSync(
    path.join(dir, 'server.js'),
    `require('node:http').createServer((q, s) => s.end('app ${i} on ' + process.version)).listen(Number(process.env.PORT), '0.0.0.0');\nprocess.on('SIGTERM', () => process.exit(0));\n`,
  );
  return dir;
}

describe('the shared download cache under concurrent builds', () => {
  it('four builds at once, one killed while it downloads Node.js: one download of each tool, complete entries, every other build runs', async () => {
    const cache = tmpDir('rbp-dc-');
    const env = { NO_COLOR: '1', RBP_DOWNLOAD_CACHE: cache, XDG_CACHE_HOME: tmpDir('rbp-dc-xdg-') };
    const apps = [0, 1, 2, 3].map(nodeApp);
    const outs = apps.map((_, i) => path.join(tmpDir('rbp-dc-out-'), `out${i}`));
    const build = (i: number) => execa('node', ['--', RBP, 'build', apps[i]!, '--out', outs[i]!, '--type', 'node'], { env, all: true, reject: false });
    const logs: string[] = ['', '', '', ''];
    const started: ResultPromise[] = [];
    const start = (i: number) => {
      const p = build(i);
      p.all.on('data', (d: Buffer | string) => (logs[i] = logs[i]! + d.toString()));
      started[i] = p;
      return p;
    };

    // Build 0 takes Node.js's entry lock and starts downloading; the others start then.
    const first = start(0);
    for (let t = 0; t < 600 && !/- download \S+node-linux-\w+-24\.\d+\.\d+\.tgz/.test(logs[0]!); t++) await new Promise((r) => setTimeout(r, 50));
    expect(logs[0], 'build 0 reached the download').toMatch(/- download \S+node-linux/);
    const others = [1, 2, 3].map(start);
    // Killed once another build waits on its download (the event itself, not a fixed delay).
    const waiting = () => logs.slice(1).some((l) => l.includes('another build is downloading node'));
    for (let t = 0; t < 1200 && !waiting(); t++) await new Promise((r) => setTimeout(r, 25));
    expect(waiting(), logs.join('\n')).toBe(true);
    // A power cut: rbp and the buildpack it runs, without a chance to clean up.
    const [pid, group] = fs.readFileSync(`${outs[0]}.rbp-lock`, 'utf8').split('\n').map(Number);
    if (group) process.kill(-group, 'SIGKILL');
    process.kill(pid!, 'SIGKILL');
    expect((await first).signal).toBe('SIGKILL');

    const results = await Promise.all(others);
    results.forEach((r, k) => expect(r.exitCode, logs[k + 1]).toBe(0));
    const all = logs.slice(1).join('\n');
    // Each tool downloaded into the cache once at most: a second fill would log a second entry. The
    // killed build may have finished a small tool (tools install side by side) before it was killed,
    // and a SIGKILL can cut its log before that line: so among the builds that ran, at most one
    // filled each tool, and one filled Node.js (the killed build was still downloading it).
    const kept = (log: string, tool: string) =>
      log.split('\n').filter((l) => l.includes(`kept in the download cache: ${path.join(cache, tool)}${path.sep}`)).length;
    for (const tool of ['npm', 'yarn']) expect(kept(logs.join('\n'), tool), `${tool} downloads`).toBeLessThanOrEqual(1);
    expect(kept(all, 'node'), 'node downloads').toBe(1);
    expect(kept(logs[0]!, 'node')).toBe(0);
    expect(all.match(/linked from the download cache/g)?.length).toBeGreaterThanOrEqual(6);
    expect(all).toContain('another build is downloading node 24.15.0 into the download cache: waiting for it');

    // Complete entries only, each matching the digest it was recorded with; one per tool version.
    const entries = fs
      .readdirSync(cache)
      .filter((d) => !d.startsWith('.'))
      .flatMap((id) => fs.readdirSync(path.join(cache, id)).map((n) => path.join(cache, id, n)));
    expect(entries.map((e) => path.basename(path.dirname(e))).sort()).toEqual(['node', 'npm', 'yarn']);
    for (const e of entries) expect(scanTree(path.join(e, 'tree')).digest).toBe(readEntry(e)!.digest);
    // One copy on disk: the three builds' node binaries are the entry's.
    const inode = (f: string) => fs.statSync(f).ino;
    const nodeEntry = entries.find((e) => e.includes(`${path.sep}node${path.sep}`))!;
    for (const out of outs.slice(1))
      expect(inode(path.join(out, 'layers', 'rbp_node', 'node', 'bin', 'node'))).toBe(inode(path.join(nodeEntry, 'tree', 'bin', 'node')));

    // A build's app runs on the shared Node.js.
    const port = await freePort();
    const run = execa('node', ['--', RBP, 'run', outs[2]!, '--port', String(port)], { env, reject: false });
    try {
      let body = '';
      for (let t = 0; t < 200 && !body; t++) {
        body = await fetch(`http://127.0.0.1:${port}/`).then(
          (r) => r.text(),
          () => '',
        );
        if (!body) await new Promise((r) => setTimeout(r, 100));
      }
      expect(body).toBe('app 2 on v24.15.0');
      // While it runs, prune keeps its OUT whole.
      const dry = await rbp(['prune', '--dry-run', '--json', '--caches'], { env });
      expect(dry.exitCode, dry.all).toBe(0);
      const plan = JSON.parse(dry.stdout) as { removed: { path: string; kind: string }[]; kept: { path: string; why: string }[] };
      expect(plan.kept).toContainEqual({ path: outs[2], why: expect.stringMatching(/^in use by rbp run or deploy \(process \d+\)$/) });
      expect(plan.removed.filter((i) => i.path.startsWith(outs[2]!))).toEqual([]);
    } finally {
      run.kill('SIGTERM');
      await run;
    }

    // prune: the killed fill's litter goes, the entries layers use stay.
    const pruned = await rbp(['prune', '--json'], { env });
    expect(pruned.exitCode, pruned.all).toBe(0);
    const done = JSON.parse(pruned.stdout) as { removed: { kind: string }[]; kept: { path: string }[] };
    expect(done.removed.some((i) => i.kind === 'litter')).toBe(true);
    expect(done.kept.map((k) => k.path)).toEqual(expect.arrayContaining(entries));
    expect(fs.readdirSync(path.join(cache, '.incoming'))).toEqual([]);

    // The killed build's OUT: its next build recovers and links everything.
    const again = await rbp(['build', apps[0]!, '--out', outs[0]!, '--type', 'node'], { env });
    expect(again.exitCode, again.all).toBe(0);
    expect(again.all).not.toMatch(/- download \S+node-linux/);
  }, 240_000);
});
