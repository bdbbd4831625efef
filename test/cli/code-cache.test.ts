/**
 * dist/rbp.js runs the CLI bundle with V8's code cache, which rbp makes itself after a command that
 * succeeded (scripts/build.mjs, RBP_LOADER): when there is none, or when V8 refuses it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { beforeEach, describe, expect, it } from 'vitest';
import { ROOT, tmpDir } from '../helpers/rbp.ts';

let dir: string;
const cacheFile = () => path.join(dir, 'rbp.bundle.cjs.v8cache');
/** The cache's header: the bundle it was made for. */
const header = () => fs.readFileSync(cacheFile()).toString('utf8').split('\n')[0];
const run = (...args: string[]) => execa('node', ['--', path.join(dir, 'rbp.js'), ...args], { reject: false, env: { NO_COLOR: '1' } });

beforeEach(() => {
  // A copy of the CLI, so that this test owns its cache.
  dir = tmpDir('rbp-code-cache-');
  for (const f of ['rbp.js', 'rbp.bundle.cjs', 'package.json']) fs.copyFileSync(path.join(ROOT, 'dist', f), path.join(dir, f));
});

describe('rbp’s code cache', () => {
  it('is made by the first command that succeeds, then used as it is', async () => {
    expect(fs.existsSync(cacheFile())).toBe(false);
    const first = await run('--version');
    expect(first.stdout).toMatch(/^rbp \d+\.\d+\.\d+ \(node v/);
    expect(header()).toBe(path.join(dir, 'rbp.bundle.cjs'));
    const made = fs.readFileSync(cacheFile());
    const again = await run('--version');
    expect(again.stdout).toBe(first.stdout);
    expect(fs.readFileSync(cacheFile()).equals(made)).toBe(true);
  });

  it('is replaced when V8 refuses it or it names another bundle', async () => {
    const garbage = Buffer.concat([Buffer.from(`${path.join(dir, 'rbp.bundle.cjs')}\n`), Buffer.alloc(4096, 7)]);
    fs.writeFileSync(cacheFile(), garbage);
    expect((await run('--version')).exitCode).toBe(0);
    expect(fs.readFileSync(cacheFile()).equals(garbage)).toBe(false);

    const other = `/elsewhere/rbp.bundle.cjs\n${fs.readFileSync(cacheFile()).subarray(0, 100).toString('latin1')}`;
    fs.writeFileSync(cacheFile(), other);
    expect((await run('--version')).exitCode).toBe(0);
    expect(header()).toBe(path.join(dir, 'rbp.bundle.cjs'));
  });

  it('is not made by a command that fails, and leaves no temporary file', async () => {
    const r = await run('no-such-command');
    expect(r.exitCode).not.toBe(0);
    expect(fs.readdirSync(dir).sort()).toEqual(['package.json', 'rbp.bundle.cjs', 'rbp.js']);
  });
});
