/**
 * Node rule 2 end to end: the launch plan of a real build (`rbp run OUT --dry-run`) gives the app
 * NODE_OPTIONS with --max-old-space-size at 3/4 of the instance's memory; a NODE_OPTIONS without the
 * flag gets it appended; one that already holds it is left unchanged. One build serves every case.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, envArgs, freePort, rbp, tmpDir } from '../helpers/rbp.ts';

let work: string;
let out: string;

beforeAll(async () => {
  work = tmpDir('rbp-node-memory-');
  out = path.join(work, 'out');
  const r = await rbp(['build', path.join(FIXTURES, 'node-hello'), '--out', out, '--type', 'node', '--cache', path.join(work, 'cache')]);
  if (r.exitCode !== 0) throw new Error(`build failed:\n${r.all}`);
}, 300_000);
afterAll(() => fs.promises.rm(work, { recursive: true, force: true }), 60_000);

/** The app's environment in the launch plan of `rbp run OUT --dry-run ...args`. */
async function launchEnv(args: string[], env: Record<string, string> = {}): Promise<Record<string, string>> {
  const r = await rbp(['run', out, '--dry-run', '--port', String(await freePort()), ...args, ...envArgs(env)]);
  expect(r.exitCode, r.all).toBe(0);
  return JSON.parse(r.stdout).launch.env as Record<string, string>;
}

describe('NODE_OPTIONS --max-old-space-size (node rule 2)', () => {
  it('is 3/4 of --memory 2G when NODE_OPTIONS is unset', async () => {
    expect((await launchEnv(['--memory', '2G'])).NODE_OPTIONS).toBe('--max-old-space-size=1536');
  });

  it('is appended to a NODE_OPTIONS set without it', async () => {
    expect((await launchEnv(['--memory', '2G'], { NODE_OPTIONS: '--enable-source-maps' })).NODE_OPTIONS).toBe('--enable-source-maps --max-old-space-size=1536');
  });

  it('leaves a NODE_OPTIONS that already holds a value unchanged', async () => {
    expect((await launchEnv(['--memory', '2G'], { NODE_OPTIONS: '--max-old-space-size=100' })).NODE_OPTIONS).toBe('--max-old-space-size=100');
  });

  it('follows the instance size: S (2 GiB) gives 1536, pico (256 MiB) gives 192', async () => {
    expect((await launchEnv(['--instance', 'S'])).NODE_OPTIONS).toBe('--max-old-space-size=1536');
    expect((await launchEnv(['--instance', 'pico'])).NODE_OPTIONS).toBe('--max-old-space-size=192');
  });

  it('is 768 on the default instance (XS, 1 GiB)', async () => {
    expect((await launchEnv([])).NODE_OPTIONS).toBe('--max-old-space-size=768');
  });
});
