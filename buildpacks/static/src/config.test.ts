import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readConfig } from './config.ts';
import { renderedUserError } from '../../../test/helpers/user-error.ts';

const appDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-cfg-'));

function errorOf(env: Record<string, string>): string {
  return renderedUserError(() => readConfig(env, appDir));
}

describe('static configuration', () => {
  it('reads defaults, and a leading / as the root', () => {
    const c = readConfig({ CC_WEBROOT: '/public/', CC_STATIC_CADDYFILE: 'conf/Caddyfile', CC_BUILD_COMMAND: ' ' }, appDir);
    expect(c.webroot?.rel).toBe('public');
    expect(c.caddyfile?.rel).toBe('conf/Caddyfile');
    expect(c.outDir.rel).toBe('cc_static_autobuilt');
    expect(c.buildCommand).toBeUndefined();
    expect(readConfig({ CC_WEBROOT: '/' }, appDir).webroot?.rel).toBe('');
  });

  it('refuses a webroot outside the root', () => {
    expect(errorOf({ CC_WEBROOT: '/../../etc' })).toMatchInlineSnapshot(`
      "! ERROR CC_WEBROOT points outside the application
      !
      ! Seen: CC_WEBROOT: "/../../etc" (the application environment)
      ! Rule: CC_WEBROOT is a path inside the application (relative to its root; a leading / means the root), also once symbolic links are followed.
      ! Fix:  Set CC_WEBROOT to a path inside the project (relative to its root), for example /public.
      ! (error id: config/CC_WEBROOT/invalid)"
    `);
  });

  it('refuses a symlinked webroot that leads outside the root', () => {
    fs.symlinkSync(os.tmpdir(), path.join(appDir, 'escape'));
    expect(() => readConfig({ CC_WEBROOT: 'escape' }, appDir)).toThrow(/points outside the application/);
  });

  it('refuses an unknown CC_STATIC_SERVER and an output folder that is the root', () => {
    expect(errorOf({ CC_STATIC_SERVER: 'nginx' })).toContain('config/CC_STATIC_SERVER/invalid');
    expect(errorOf({ CC_STATIC_AUTOBUILD_OUTDIR: '/' })).toContain('config/CC_STATIC_AUTOBUILD_OUTDIR/invalid');
  });
});
