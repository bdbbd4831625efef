/** Bad input: one clear error each (snapshotted), no stack trace, nothing built. */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { copyFixture, rbp, tmpDir } from '../helpers/rbp.ts';
import { build, envArgs, spec, swsMirror, swsTool } from './helpers.ts';

// Builds that get as far as the server install Static Web Server (the real one, from a mirror).
const sws = swsTool('static bad-input tests');
let operator: Record<string, string>;
beforeAll(async () => {
  if (!sws.skip) operator = { RBP_DEPENDENCY_MIRROR: await swsMirror(sws.path()), RBP_NOW: '2026-11-22' };
});

/** The rendered UserError block of a build (or detect) log. */
function errorBlock(log: string): string {
  // Detection errors come indented under the detect line; build errors are flush.
  const lines = log.split('\n').map((l) => l.trim());
  const start = lines.findIndex((l) => l.startsWith('! ERROR'));
  expect(start, log).toBeGreaterThanOrEqual(0);
  const end = lines.findIndex((l, i) => i > start && l.startsWith('! (error id:'));
  return lines.slice(start, end + 1).join('\n');
}

async function failingBuild(fixture: string, env: Record<string, string>): Promise<string> {
  const out = path.join(tmpDir(), 'out');
  const r = await build(copyFixture(fixture), out, env, operator);
  expect(r.exitCode, r.all).not.toBe(0);
  expect(r.all).not.toMatch(/\n\s+at .*\(.*:\d+:\d+\)/); // no stack trace
  expect(fs.existsSync(path.join(out, 'layers'))).toBe(false);
  return errorBlock(r.all);
}

describe.skipIf(sws.skip)('static bad input', () => {
  it('no index, no CC_BUILD_COMMAND, no generator: --type static says what is missing', async () => {
    const s = spec('static-no-index');
    const r = await rbp(['detect', copyFixture('static-no-index'), '--type', 'static']);
    expect(r.exitCode).toBe(20);
    expect(r.all).toContain(s.log!.at(-1)!);
    expect(r.all).toContain('a CC_BUILD_COMMAND, or a static site generator file at the root (astro.config.mjs');
  });

  it('a webroot without an index after the build', async () => {
    expect(await failingBuild('static-build-command', { CC_BUILD_COMMAND: 'mkdir -p dist && touch dist/other.html', CC_WEBROOT: '/dist' })).toMatchSnapshot();
  });

  it('a Hugo version that is no longer supported (today is past June 15th 2026)', async () => {
    expect(await failingBuild('static-hugo', { CC_HUGO_VERSION: '0.149' })).toMatchSnapshot();
  });

  it('a Hugo version that is not in the list', async () => {
    expect(await failingBuild('static-hugo', { CC_HUGO_VERSION: '0.111' })).toContain('accepted: 0.160, 0.161');
  });

  it('a webroot outside the root', async () => {
    expect(await failingBuild('static-index-html', { CC_WEBROOT: '/../outside' })).toMatchSnapshot();
  });

  it('a Caddyfile named by CC_STATIC_CADDYFILE that does not exist', async () => {
    expect(await failingBuild('static-index-html', { CC_STATIC_CADDYFILE: 'config/Caddyfile' })).toMatchSnapshot();
  });

  it('a build cache override that leaves out the served folder', async () => {
    expect(await failingBuild('static-webroot-htm', { CC_WEBROOT: '/public', CC_OVERRIDE_BUILDCACHE: 'sws.toml:notes.txt' })).toMatchSnapshot();
  });

  it('a build cache override escaping the root', async () => {
    expect(await failingBuild('static-index-html', { CC_OVERRIDE_BUILDCACHE: 'index.html:../../etc' })).toContain('config/CC_OVERRIDE_BUILDCACHE/invalid');
  });

  it('a failing CC_BUILD_COMMAND', async () => {
    expect(await failingBuild('static-build-command', { CC_BUILD_COMMAND: 'echo building; exit 3' })).toMatchSnapshot();
  });

  it('CC_STATIC_FLAGS with shell syntax fails at launch, not silently', async () => {
    const out = path.join(tmpDir(), 'out');
    expect((await build(copyFixture('static-index-html'), out, {}, operator)).exitCode).toBe(0);
    const r = await rbp(['run', out, '--dry-run', ...envArgs({ CC_STATIC_FLAGS: '--root / ; rm -rf /' })]);
    expect(r.exitCode).not.toBe(0);
    expect(r.all).toContain('static/flags/invalid');
  });

  it('CC_STATIC_FLAGS with shell syntax given at build fails the build: the launch command is planned there (lib/launch/stored-plan.ts)', async () => {
    const text = await failingBuild('static-index-html', { CC_STATIC_FLAGS: '--root / ; rm -rf /' });
    expect(text).toContain('(error id: static/flags/invalid)');
    expect(text).not.toMatch(/\n\s+at /);
  });
});
