import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderedUserError as rendered } from '../../../test/helpers/user-error.ts';
import { findIndex as findIndexIn, INDEX_FILES } from '../../../lib/app-path.ts';
import { missingIndexReason, resolveWebroot as resolveWebrootOf, type Webroot } from './webroot.ts';
import { resolveWorker } from './worker.ts';

const resolveWebroot = (appDir: string, v: string | undefined) => resolveWebrootOf(appDir, v === undefined ? {} : { CC_WEBROOT: v });
const findIndex = (w: Webroot) => findIndexIn(w.abs, INDEX_FILES.phpserver);

function app(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-php-webroot-'));
  for (const [f, c] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), c);
  }
  return dir;
}

describe('resolveWebroot', () => {
  it('normalises CC_WEBROOT relative to the root', () => {
    for (const [v, rel] of [
      [undefined, '.'],
      ['/', '.'],
      ['', '.'],
      ['public', 'public'],
      ['/public/', 'public'],
      ['./web/root', 'web/root'],
    ] as const) {
      expect(resolveWebroot('/app', v).rel).toBe(rel);
    }
    expect(resolveWebroot('/app', '/public').abs).toBe('/app/public');
  });
  it('names a symlinked webroot by where it leads, and refuses one that leads outside', () => {
    const dir = app({ 'dist/index.php': '' });
    fs.symlinkSync(path.join(dir, 'dist'), path.join(dir, 'public'));
    expect(resolveWebroot(dir, '/public')).toEqual({ rel: 'dist', abs: path.join(dir, 'dist'), setting: '/public' });
    fs.symlinkSync(os.tmpdir(), path.join(dir, 'escape'));
    expect(() => resolveWebroot(dir, 'escape')).toThrow(/CC_WEBROOT points outside the application/);
  });
  it('refuses a webroot outside the project', () => {
    expect(rendered(() => resolveWebroot('/app', '../x'))).toMatchInlineSnapshot(`
      "! ERROR CC_WEBROOT points outside the application
      !
      ! Seen: CC_WEBROOT: "../x" (the application environment)
      ! Rule: CC_WEBROOT is a path inside the application (relative to its root; a leading / means the root), also once symbolic links are followed.
      ! Fix:  Set CC_WEBROOT to a directory inside the project, such as /public.
      ! (error id: config/CC_WEBROOT/invalid)"
    `);
  });
  it('finds index.php before index.html and says what is missing where', () => {
    const dir = app({ 'public/index.html': '', 'index.php': '' });
    expect(findIndex(resolveWebroot(dir, undefined))).toBe('index.php');
    expect(findIndex(resolveWebroot(dir, 'public'))).toBe('index.html');
    const empty = resolveWebroot(dir, 'src');
    expect(findIndex(empty)).toBeUndefined();
    expect(missingIndexReason(empty)).toBe(
      `phpserver needs index.php or index.html in the webroot, and the webroot src/ does not exist (CC_WEBROOT=src, ${dir}/src)`,
    );
  });
});

describe('resolveWorker', () => {
  const dir = app({ 'public/index.php': '', 'public/worker.php': '', 'worker.php': '', 'public/sub/w.php': '' });
  const webroot = resolveWebroot(dir, 'public');
  it('accepts a script inside the webroot, with or without a leading slash', () => {
    expect(resolveWorker(dir, webroot, '/public/worker.php')).toBe('public/worker.php');
    expect(resolveWorker(dir, webroot, 'public/sub/w.php')).toBe('public/sub/w.php');
    expect(resolveWorker(dir, webroot, undefined)).toBeUndefined();
  });
  it('refuses a script outside the webroot, through .. or through a symlink', () => {
    expect(rendered(() => resolveWorker(dir, webroot, 'worker.php')).replaceAll(dir, '<app>')).toMatchInlineSnapshot(`
      "! ERROR The worker script is not inside the webroot
      !
      ! Seen: CC_PHPSERVER_WORKER: "worker.php" (the application environment)
      ! Rule: the worker script must be inside the webroot (/public, CC_WEBROOT)
      !   worker.php is outside /public
      ! Fix:  move the script under /public and point CC_PHPSERVER_WORKER at it, e.g. /public/worker.php
      ! (error id: config/CC_PHPSERVER_WORKER/invalid)"
    `);
    expect(() => resolveWorker(dir, webroot, '/public/../worker.php')).toThrow(/not inside the webroot/);
    fs.symlinkSync(path.join(dir, 'worker.php'), path.join(dir, 'public', 'link.php'));
    expect(() => resolveWorker(dir, webroot, 'public/link.php')).toThrow(/not inside the webroot/);
  });
  it('refuses a script that does not exist', () => {
    expect(rendered(() => resolveWorker(dir, webroot, '/public/nope.php')).replaceAll(dir, '<app>')).toMatchInlineSnapshot(`
      "! ERROR CC_PHPSERVER_WORKER names something that does not exist
      !
      ! Seen: CC_PHPSERVER_WORKER: "/public/nope.php" (the application environment)
      ! Rule: CC_PHPSERVER_WORKER names a file of the application, which must exist.
      ! Fix:  add public/nope.php to the project, or correct CC_PHPSERVER_WORKER
      ! (error id: config/CC_PHPSERVER_WORKER/invalid)"
    `);
  });
});
