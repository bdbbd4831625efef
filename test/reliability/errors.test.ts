/**
 * Inputs that used to end in a stack trace ("Stack traces instead of errors"): each one is
 * now a user error with an id (exit 2, or the lifecycle's status), or works.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { unpack } from '../../lib/deps/unpack.ts';
import { FIXTURES, freePort, rbp, tmpDir } from '../helpers/rbp.ts';
import { rejectedUserError, stableRendering } from '../helpers/user-error.ts';
import { bp, bpArgs, launchToml, passWith, scriptedApp } from '../lifecycle/helpers.ts';

const TRACE = /\n\s+at .+:\d+:\d+\)?(\n|$)/;
const WEB = launchToml('[[processes]]\ntype = "web"\ncommand = ["echo", "hello"]\ndefault = true');

async function goodOut(): Promise<string> {
  const out = path.join(tmpDir('rbp-out-'), 'out');
  const r = await rbp(['build', scriptedApp({ 'a/detect': passWith(), 'a/build': WEB }), '--out', out, ...bpArgs('a')]);
  expect(r.exitCode).toBe(0);
  return out;
}

function expectUserError(r: { exitCode: number; all: string }, id: string, code = 2): void {
  expect(r.all).not.toMatch(TRACE);
  expect(r.all).not.toContain('internal error');
  expect(r.all).not.toContain('undefined');
  expect(r.all).toContain(`(error id: ${id}`);
  expect(r.exitCode).toBe(code);
}

describe('each former stack-trace input is a user error with an id', () => {
  it('rbp detect on a missing folder: a usage error (2), not 21', async () => {
    const r = await rbp(['detect', path.join(tmpDir(), 'nope')]);
    expectUserError(r, 'platform/app/not-found');
  });

  it.each([
    ['CC_WEBROOT naming a file', 'file.txt'],
    ['CC_WEBROOT with a very long name', `/${'a'.repeat(300)}/${'b'.repeat(5000)}`],
  ])('%s: each buildpack says no, or one clear error', async (_what, webroot) => {
    const app = tmpDir('rbp-app-');
    fs.writeFileSync(path.join(app, 'index.html'), 'hi');
    fs.writeFileSync(path.join(app, 'index.php'), '<?php');
    fs.writeFileSync(path.join(app, 'file.txt'), 'x');
    const r = await rbp(['detect', app, '--env', `CC_WEBROOT=${webroot}`]);
    expect(r.all).not.toMatch(TRACE);
    expect(r.all).not.toContain('undefined');
    expect([20, 21]).toContain(r.exitCode);
  });

  it.each(['tar.gz', 'tar.xz', 'zip'] as const)(
    'a damaged %s archive whose checksum matched: one error naming the tool, not the unpacker’s trace',
    async (archive) => {
      const dir = tmpDir('rbp-unpack-');
      const file = path.join(dir, `tool.${archive}`);
      // A valid gzip/xz/zip start, then garbage: what a truncated or corrupted upload looks like.
      const head = { 'tar.gz': [0x1f, 0x8b, 0x08, 0x00], 'tar.xz': [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], zip: [0x50, 0x4b, 0x03, 0x04] }[archive];
      fs.writeFileSync(file, Buffer.concat([Buffer.from(head), Buffer.alloc(512, 0x41)]));
      const e = await rejectedUserError(unpack(file, path.join(dir, 'out'), { id: 'caddy', version: '2.11.2', archive, stripComponents: 0, bin: 'caddy' }));
      expect(e.id).toBe('deps/unpack-failed');
      expect(stableRendering(e, { [dir]: '<dir>' })).toMatchSnapshot();
      expect(e.data.title).toBe('caddy 2.11.2 could not be unpacked');
      expect(e.data.fix).toContain('RBP_TOOL_CADDY');
    },
  );

  it('a broken rbp.toml in OUT', async () => {
    const out = await goodOut();
    fs.writeFileSync(path.join(out, 'rbp.toml'), 'app = "x\ninstance = [');
    expectUserError(await rbp(['run', out]), 'platform/out/damaged');
  });

  it('a broken metadata.toml in OUT', async () => {
    const out = await goodOut();
    fs.writeFileSync(path.join(out, 'layers', 'config', 'metadata.toml'), '[[processes]\n');
    expectUserError(await rbp(['run', out, '--dry-run']), 'platform/out/damaged');
  });

  it('a FIFO in the app', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': WEB });
    execFileSync('mkfifo', [path.join(app, 'pipe')]);
    const out = path.join(tmpDir('rbp-out-'), 'out');
    const r = await rbp(['build', app, '--out', out, ...bpArgs('a')]);
    expectUserError(r, 'platform/app/special-file');
    expect(r.all).toContain('"pipe"');
    expect(fs.existsSync(out)).toBe(false);
  });

  it('a socket in the app', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': WEB });
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(path.join(app, 'app.sock'), resolve));
    try {
      const r = await rbp(['build', app, '--out', path.join(tmpDir('rbp-out-'), 'out'), ...bpArgs('a')]);
      expectUserError(r, 'platform/app/special-file');
      expect(r.all).toContain('a socket');
    } finally {
      server.close();
    }
  });

  it('a bin/build that cannot be started: a build failure (51) naming why, never "exit undefined"', async () => {
    const dir = tmpDir('rbp-bp-');
    fs.cpSync(bp('a'), path.join(dir, 'a'), { recursive: true });
    fs.copyFileSync(path.join(path.dirname(bp('a')), 'scripted.sh'), path.join(dir, 'scripted.sh'));
    fs.chmodSync(path.join(dir, 'a', 'bin', 'build'), 0o644);
    const r = await rbp(['build', scriptedApp({ 'a/detect': passWith() }), '--out', path.join(tmpDir('rbp-out-'), 'out'), '--buildpack', path.join(dir, 'a')]);
    expect(r.exitCode).toBe(51);
    expect(r.all).not.toContain('undefined');
    expect(r.all).toMatch(/EACCES|permission denied/i);
  });

  it('CC_HEALTH_CHECK_PATH with a space and non-ASCII is percent-encoded; deploy answers and stops the app', async () => {
    const port = await freePort();
    const r = await rbp(
      [
        'deploy',
        path.join(FIXTURES, 'buildpacks', 'apps', 'http-server'),
        '--out',
        path.join(tmpDir('rbp-out-'), 'out'),
        '--buildpack',
        bp('node-server'),
        '--port',
        String(port),
        '--check',
        '--timeout',
        '20',
        '--env',
        'CC_HEALTH_CHECK_PATH=/a b',
        '--env',
        'CC_HEALTH_CHECK_PATH_1=/é',
      ],
      { timeout: 60_000 },
    );
    expect(r.all).not.toMatch(TRACE);
    expect(r.all).toContain('Response from GET /a%20b is');
    expect(r.all).toContain('Response from GET /%C3%A9 is');
    // The app was stopped: nothing listens any more.
    await expect(
      new Promise((resolve, reject) => {
        const s = net.connect(port, '127.0.0.1');
        s.once('connect', () => {
          s.destroy();
          reject(new Error('still listening'));
        });
        s.once('error', resolve);
      }),
    ).resolves.toBeDefined();
  });
});
