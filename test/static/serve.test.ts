/**
 * Static Web Server's own options, run for real (2.42.0, installed by the buildpack from a mirror
 * holding the real binary, see helpers.ts): sws.toml and CC_STATIC_FLAGS. Every server path of
 * rule 5, with its exact command line, the build cache content of rule 4 and the pages served, is
 * checked fixture by fixture by the one driver: fixtures.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { copyFixture, freePort, RBP, tmpDir, waitForHttp } from '../helpers/rbp.ts';
import { build, serve, swsMirror, swsTool } from './helpers.ts';

const sws = swsTool('static serve tests (Static Web Server)');
const swsOperator = async (): Promise<Record<string, string>> => ({ RBP_DEPENDENCY_MIRROR: await swsMirror(sws.path()) });

describe.skipIf(sws.skip)('Static Web Server options, for real', () => {
  it('sws.toml at the root is read: its [general] health = true answers /health', async () => {
    const out = path.join(tmpDir(), 'out');
    expect((await build(copyFixture('static-webroot-htm'), out, { CC_WEBROOT: '/public' }, await swsOperator())).exitCode).toBe(0);
    const served = await serve(out, await freePort());
    try {
      expect((await served.get('/health')).status).toBe(200);
    } finally {
      await served.stop();
    }
  });

  it("a port in sws.toml wins over CC_STATIC_PORT, as the build warns: Static Web Server listens on the file's", async () => {
    const app = copyFixture('static-webroot-htm');
    const [filePort, ourPort] = [await freePort(), await freePort()];
    fs.appendFileSync(path.join(app, 'sws.toml'), `port = ${filePort}\n`);
    const out = path.join(tmpDir(), 'out');
    const r = await build(app, out, { CC_WEBROOT: '/public' }, await swsOperator());
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain(`sws.toml sets general.port = ${filePort}: Static Web Server gives it precedence over CC_STATIC_PORT`);
    const child = execa('node', [RBP, 'run', out, '--port', String(ourPort)], { reject: false, all: true });
    try {
      await waitForHttp(filePort, () => child.exitCode === null);
      expect((await fetch(`http://127.0.0.1:${filePort}/`)).status).toBe(200);
      await expect(fetch(`http://127.0.0.1:${ourPort}/`)).rejects.toThrow();
    } finally {
      child.kill('SIGTERM');
      await child;
    }
  });

  it('CC_STATIC_FLAGS reach the server: --directory-listing lists a folder without an index', async () => {
    const app = copyFixture('static-index-html');
    const out = path.join(tmpDir(), 'out');
    expect((await build(app, out, {}, await swsOperator())).exitCode).toBe(0);
    const plain = await serve(out, await freePort());
    try {
      expect((await plain.get('/docs/guide/')).status).toBe(404);
    } finally {
      await plain.stop();
    }
    const listing = await serve(out, await freePort(), { CC_STATIC_FLAGS: '--directory-listing true' });
    try {
      const r = await listing.get('/docs/guide/');
      expect(r.status).toBe(200);
      expect(r.body).toContain('page.html');
    } finally {
      await listing.stop();
    }
  });
});
