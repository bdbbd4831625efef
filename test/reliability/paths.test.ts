/**
 * Confinement: a path from the app or a variable resolves inside the app after following
 * symlinks, with one resolver (lib/app-path.ts); the cache VCL is the first user of it. A file
 * outside the app is refused before any tool reads it, so its lines never reach the build log.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { resolveAppPath } from '../../lib/app-path.ts';
import { isUserError } from '../../lib/errors.ts';
import { Logger } from '../../lib/log.ts';
import { checkRequestFlowAtBuild } from '../../lib/launch/request-flow/build-check.ts';
import { planChain } from '../../lib/launch/request-flow/chain.ts';
import { tmpDir } from '../helpers/rbp.ts';

const SHADOW_LINE = 'root:$6$S3CRETHASH$abcdefghijklmnop:19000:0:99999:7:::';

function world(): { app: string; outside: string } {
  const root = tmpDir('rbp-conf-');
  const app = path.join(root, 'app');
  fs.mkdirSync(path.join(app, '.rbp'), { recursive: true });
  fs.writeFileSync(path.join(app, 'index.html'), 'hi');
  const outside = path.join(root, 'shadow');
  fs.writeFileSync(outside, `${SHADOW_LINE}\n`);
  return { app, outside };
}

/** The user error checkRequestFlowAtBuild throws, with everything it would print. */
function buildCheckError(app: string, env: NodeJS.ProcessEnv): { id: string; printed: string } {
  let printed = '';
  const log = new Logger({
    out: new Writable({
      write: (c, _e, cb) => {
        printed += String(c);
        cb();
      },
    }),
    color: false,
  });
  try {
    checkRequestFlowAtBuild(app, env, log);
  } catch (e) {
    if (!isUserError(e)) throw e;
    return { id: e.id, printed: `${printed}\n${JSON.stringify(e.data)}` };
  }
  throw new Error(`no error; printed:\n${printed}`);
}

describe('the cache VCL stays inside the app', () => {
  it.each([
    ['CC_CACHE_FILE=../shadow', (_w: ReturnType<typeof world>) => ({ CC_CACHE_FILE: '../shadow' }), 'request-flow/cache/file/outside'],
    [
      'CC_CACHE_FILE an absolute path (taken from the app root, so missing)',
      (w: ReturnType<typeof world>) => ({ CC_CACHE_FILE: w.outside }),
      'request-flow/cache/file/missing',
    ],
    [
      'CC_CACHE_FILE a symlink inside the app to a file outside',
      (w: ReturnType<typeof world>) => {
        fs.symlinkSync(w.outside, path.join(w.app, 'cache.vcl'));
        return { CC_CACHE_FILE: 'cache.vcl' };
      },
      'request-flow/cache/file/outside',
    ],
    [
      '.rbp/cache.vcl a symlink to a file outside',
      (w: ReturnType<typeof world>) => {
        fs.symlinkSync(w.outside, path.join(w.app, '.rbp', 'cache.vcl'));
        return {};
      },
      'request-flow/cache/file/outside',
    ],
    [
      '.rbp a symlinked folder outside the app',
      (w: ReturnType<typeof world>) => {
        fs.rmSync(path.join(w.app, '.rbp'), { recursive: true });
        const dir = path.join(path.dirname(w.outside), 'conf');
        fs.mkdirSync(dir);
        fs.copyFileSync(w.outside, path.join(dir, 'cache.vcl'));
        fs.symlinkSync(dir, path.join(w.app, '.rbp'));
        return {};
      },
      'request-flow/cache/file/outside',
    ],
    ['CC_CACHE_FILE naming a folder', () => ({ CC_CACHE_FILE: '.rbp' }), 'request-flow/cache/file/not-file'],
    ['CC_CACHE_FILE a very long name', () => ({ CC_CACHE_FILE: `${'x'.repeat(300)}/${'y'.repeat(5000)}.vcl` }), 'request-flow/cache/file/unusable'],
  ])('%s is refused before Varnish reads it', (_what, setup, id) => {
    const w = world();
    const env = setup(w);
    const e = buildCheckError(w.app, env);
    expect(e.id).toBe(id);
    expect(e.printed).not.toContain('S3CRETHASH');
    expect(() => planChain(env, w.app)).toThrow();
  });

  it('a symlink to a VCL inside the app is accepted', () => {
    const w = world();
    fs.writeFileSync(path.join(w.app, 'real.vcl'), 'vcl 4.1;\n');
    fs.symlinkSync('../real.vcl', path.join(w.app, '.rbp', 'cache.vcl'));
    expect(planChain({}, w.app).middlewares).toEqual(['cache']);
  });
});

describe('resolveAppPath', () => {
  it('follows symlinks, dangling ones included, and refuses what leaves the app', () => {
    const w = world();
    fs.symlinkSync('/nonexistent-dir/x', path.join(w.app, 'dangling'));
    fs.symlinkSync(path.dirname(w.outside), path.join(w.app, 'up'));
    fs.mkdirSync(path.join(w.app, 'public'));
    expect(resolveAppPath(w.app, 'dangling', 'any', false).problem).toBe('outside');
    expect(resolveAppPath(w.app, 'up/shadow').problem).toBe('outside');
    expect(resolveAppPath(w.app, 'up/new/file', 'any', false).problem).toBe('outside');
    expect(resolveAppPath(w.app, '../app/public', 'dir').path?.rel).toBe('public');
    expect(resolveAppPath(w.app, '/public', 'dir').path?.rel).toBe('public');
    expect(resolveAppPath(w.app, '/', 'dir').path?.rel).toBe('');
    expect(resolveAppPath(w.app, 'index.html', 'dir').problem).toBe('not-dir');
    expect(resolveAppPath(w.app, 'public', 'file').problem).toBe('not-file');
    expect(resolveAppPath(w.app, 'nope').problem).toBe('missing');
    expect(resolveAppPath(w.app, 'nope', 'any', false).problem).toBeUndefined();
  });
});

describe('the Caddyfile stays inside the app', () => {
  it('./Caddyfile a symlink to a file outside is refused before Caddy reads it', async () => {
    const { locateCaddyfile } = await import('../../buildpacks/static/src/caddyfile.ts');
    const w = world();
    fs.symlinkSync(w.outside, path.join(w.app, 'Caddyfile'));
    let message = '';
    try {
      locateCaddyfile({} as never, w.app);
    } catch (e) {
      if (!isUserError(e)) throw e;
      message = JSON.stringify(e.data);
      expect(e.id).toBe('config/CC_STATIC_CADDYFILE/invalid');
    }
    expect(message).not.toBe('');
    expect(message).not.toContain('S3CRETHASH');
  });

  it('./Caddyfile a symlink to a file inside is used', async () => {
    const { locateCaddyfile } = await import('../../buildpacks/static/src/caddyfile.ts');
    const w = world();
    fs.mkdirSync(path.join(w.app, 'conf'));
    fs.writeFileSync(path.join(w.app, 'conf', 'Caddyfile'), ':8080\n');
    fs.symlinkSync('conf/Caddyfile', path.join(w.app, 'Caddyfile'));
    expect(locateCaddyfile({} as never, w.app)).toEqual({ rel: 'Caddyfile', abs: path.join(w.app, 'Caddyfile'), explicit: false });
  });
});
