/**
 * A snapshot, or a fixture's test.json, records what a rule decides, never a version a registry can
 * move (test/helpers/registry-versions.ts names those by their rule). Every version written in one
 * must be pinned where no registry can move it: by the product (a constant or a buildpack.toml: the
 * contract's versions), by a fixture's own files (package.json, lock files, a checked-in release), or,
 * for a snapshot, by the test that writes it (a unit test's own input).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/rbp.ts';

/** Whole x.y.z versions: not the parts of an IP address (127.0.0.1) or of a longer dotted number. */
const VERSION = /(?<![\d.])\d+\.\d+\.\d+(?![\d]|\.\d)/g;

const tracked = (...paths: string[]): string[] =>
  execFileSync('git', ['ls-files', '-z', ...paths], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);

const versionsIn = (text: string): Set<string> => new Set(text.match(VERSION) ?? []);

function read(rel: string): string {
  const buf = fs.readFileSync(path.join(ROOT, rel));
  return buf.includes(0) ? '' : buf.toString('utf8');
}

/** The versions pinned by the product and the fixtures' own files (not their test.json: that is what is checked). */
function pinnedVersions(): Set<string> {
  const files = [
    ...tracked('lib', 'buildpacks', 'scripts').filter((f) => !f.endsWith('.test.ts') && !f.includes('__snapshots__')),
    ...tracked('fixtures').filter((f) => path.basename(f) !== 'test.json'),
  ];
  const pinned = new Set<string>();
  for (const f of files) for (const v of versionsIn(read(f))) pinned.add(v);
  return pinned;
}

/** The test file a snapshot belongs to (`x/__snapshots__/a.test.ts.snap` → `x/a.test.ts`), if any. */
function writerOf(snapshot: string): string | undefined {
  const test = path.join(path.dirname(path.dirname(snapshot)), path.basename(snapshot).replace(/\.snap$/, ''));
  return fs.existsSync(path.join(ROOT, test)) ? test : undefined;
}

/** For each recording, the versions in it that nothing pins. */
export function unpinned(recordings: { file: string; text: string; own?: string }[], pinned: Set<string>): string[] {
  const found: string[] = [];
  for (const r of recordings) {
    const own = versionsIn(r.own ?? '');
    for (const v of versionsIn(r.text)) if (!pinned.has(v) && !own.has(v)) found.push(`${r.file}: ${v}`);
  }
  return found;
}

describe('snapshots and test.json record no version a registry can move', () => {
  it('every version in them is pinned by the product, a fixture or the test that writes it', () => {
    const recordings = [...tracked().filter((f) => f.includes('__snapshots__/')), ...tracked('fixtures').filter((f) => path.basename(f) === 'test.json')].map(
      (file) => {
        const writer = file.includes('__snapshots__/') ? writerOf(file) : undefined;
        return { file, text: read(file), ...(writer ? { own: read(writer) } : {}) };
      },
    );
    expect(recordings.length).toBeGreaterThan(10);
    expect(unpinned(recordings, pinnedVersions())).toEqual([]);
  });

  it('a snapshot that records the newest patch a registry served is caught', () => {
    const pinned = pinnedVersions();
    // What the launch plan of engines "22.x" recorded before its version was named by its rule.
    const moved = { file: 'x/__snapshots__/a.test.ts.snap', text: '{ "node": "22.23.3", "listen": "0.0.0.0:8080", "npm": "11.12.1" }' };
    expect(unpinned([moved], pinned)).toEqual(['x/__snapshots__/a.test.ts.snap: 22.23.3']);
    // The contract's default and a test's own input are pinned.
    expect(unpinned([{ ...moved, text: '"node": "24.15.0"' }], pinned)).toEqual([]);
    expect(unpinned([{ ...moved, own: "input('22.23.3')" }], pinned)).toEqual([]);
  });
});
