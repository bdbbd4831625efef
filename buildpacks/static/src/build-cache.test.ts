import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fg from 'fast-glob';
import { describe, expect, it } from 'vitest';
import { renderUserError, UserError } from '../../../lib/errors.ts';
import { cacheContent, pruneTo } from './build-cache.ts';

function tree(files: string[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-cache-'));
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), f);
  }
  return dir;
}
const FILES = [
  'index.html',
  'src/page.md',
  'public/index.html',
  'public/a/b.css',
  'sws.toml',
  '.rbp/cache.vcl',
  'Caddyfile',
  'node_modules/x/index.js',
  'out/index.html',
];
const base = { autoBuild: false, webrootSet: false, webroot: '', override: undefined, configFiles: [] as string[] };
const files = (dir: string) => fg.sync('**', { cwd: dir, dot: true }).sort();

describe('build cache content (rule 4)', () => {
  it('keeps the whole root without auto-build or CC_WEBROOT', () => {
    const dir = tree(FILES);
    const c = cacheContent({ ...base, appDir: dir });
    expect(c).toMatchObject({ rule: 'whole-root', paths: [''] });
    expect(pruneTo(dir, c.paths)).toEqual([]);
    expect(files(dir)).toEqual([...FILES].sort());
  });

  it('with CC_WEBROOT keeps the served folder and the configuration files only', () => {
    const dir = tree(FILES);
    const c = cacheContent({ ...base, appDir: dir, webrootSet: true, webroot: 'public', configFiles: ['Caddyfile'] });
    expect(c).toMatchObject({ rule: 'config-and-webroot', paths: ['.rbp', 'Caddyfile', 'public', 'sws.toml'], why: 'CC_WEBROOT is set' });
    pruneTo(dir, c.paths);
    expect(files(dir)).toEqual(['.rbp/cache.vcl', 'Caddyfile', 'public/a/b.css', 'public/index.html', 'sws.toml']);
  });

  it('with auto-build keeps the output folder and the configuration files that exist', () => {
    const dir = tree(['hugo.toml', 'content/_index.md', 'out/index.html']);
    const c = cacheContent({ ...base, appDir: dir, autoBuild: true, webroot: 'out' });
    expect(c).toMatchObject({ rule: 'config-and-webroot', paths: ['out'], why: 'auto-build is active' });
    pruneTo(dir, c.paths);
    expect(files(dir)).toEqual(['out/index.html']);
  });

  it('CC_OVERRIDE_BUILDCACHE replaces the rule: colon-separated, leading / meaning the root, nested paths kept', () => {
    const dir = tree(FILES);
    const c = cacheContent({ ...base, appDir: dir, autoBuild: true, webroot: 'out', override: '/out:src/page.md: public/a :out/index.html' });
    expect(c).toMatchObject({ rule: 'override', paths: ['out', 'public/a', 'src/page.md'] });
    const removed = pruneTo(dir, c.paths);
    expect(files(dir)).toEqual(['out/index.html', 'public/a/b.css', 'src/page.md']);
    expect(removed).toContain('node_modules');
    expect(removed).toContain('public/index.html');
  });

  it('refuses an override path that leaves the root', () => {
    const dir = tree(FILES);
    let err: unknown;
    try {
      cacheContent({ ...base, appDir: dir, override: 'public:../elsewhere' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    expect(renderUserError((err as UserError).data)).toMatchInlineSnapshot(`
      "! ERROR CC_OVERRIDE_BUILDCACHE points outside the application
      !
      ! Seen: CC_OVERRIDE_BUILDCACHE: "../elsewhere" (the application environment)
      ! Rule: CC_OVERRIDE_BUILDCACHE is a path inside the application (relative to its root; a leading / means the root), also once symbolic links are followed.
      ! Fix:  Set CC_OVERRIDE_BUILDCACHE to a path inside the project (relative to its root), for example /public.
      ! (error id: config/CC_OVERRIDE_BUILDCACHE/invalid)"
    `);
  });

  it('refuses an override that lists nothing', () => {
    expect(() => cacheContent({ ...base, appDir: tree([]), override: ' : ' })).toThrow(/lists no path/);
  });
});
