/**
 * `bun --bun run start` makes `node` mean Bun through a folder that Bun shares between all
 * its runs, /tmp/bun-node-<revision>/node (Bun ignores TMPDIR for it). A link left there by a Bun that
 * is gone dangles, and `node` then fell through to the Node.js layer: the app ran on Node.js and
 * `Bun.serve` crashed. The build writes its own `node -> bun` link (layer bun-node), first on the launch PATH; this test leaves
 * such a stale link (put back as it was afterwards) and checks that fixtures/node-bun-start still runs on Bun.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FIXTURES, rbp, serve, tmpDir } from '../helpers/rbp.ts';
import { forgetBunLinks } from './driver.ts';

let work: string;
beforeAll(() => {
  work = tmpDir('rbp-node-bun-stale-');
});
afterAll(() => {
  forgetBunLinks(work);
  return fs.promises.rm(work, { recursive: true, force: true });
}, 60_000);

it('a stale /tmp/bun-node-<revision>/node link does not make a Bun app run on Node.js', async () => {
  const out = path.join(work, 'out');
  const r = await rbp(['build', path.join(FIXTURES, 'node-bun-start'), '--out', out, '--type', 'node', '--cache', path.join(work, 'cache')]);
  expect(r.exitCode, r.all).toBe(0);
  const bun = path.join(out, 'layers', 'rbp_node', 'bun', 'bin', 'bun');
  const revision = (await execa(bun, ['--revision'])).stdout.trim().split('+')[1];
  expect(revision, 'bun --revision prints <version>+<revision>').toMatch(/^[0-9a-f]+$/);
  // Bun's shared folder is always under /tmp, whatever TMPDIR says.
  const shared = `/tmp/bun-node-${revision}`;
  const link = path.join(shared, 'node');
  const before = fs.lstatSync(link, { throwIfNoEntry: false }) ? fs.readlinkSync(link) : undefined;
  fs.mkdirSync(shared, { recursive: true });
  fs.rmSync(link, { force: true });
  fs.symlinkSync(path.join(work, 'a-bun-that-was-deleted', 'bun'), link);
  try {
    const served = await serve(out, {}, async (port) => {
      const body = await (await fetch(`http://127.0.0.1:${port}/`)).text();
      expect(body).toContain('hello from bun 1.3.14');
    });
    expect(served.output).not.toContain('Bun is not defined');
    expect([0, 143], served.output).toContain(served.status);
  } finally {
    fs.rmSync(link, { force: true });
    if (before) fs.symlinkSync(before, link);
    else fs.rmSync(shared, { recursive: true, force: true });
  }
}, 300_000);
