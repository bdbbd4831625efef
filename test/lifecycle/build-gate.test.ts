/**
 * The build gate (lib/platform/build-gate.ts): rbp starts its own buildpack's bin/build while restore
 * checks the layers, and the program waits before it reads anything, until rbp opens the gate.
 * These tests drive dist's real bin/build through the protocol, and a whole build through rbp.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GATE_FD, GATE_OPEN, GATE_VAR, waitsAtGate } from '../../lib/platform/build-gate.ts';
import { rbp, ROOT, tmpDir } from '../helpers/rbp.ts';

const NODE_BP = path.join(ROOT, 'dist', 'buildpacks', 'node');

/** dist's node bin/build with empty layers, platform and plan, its fd 3 a pipe when `gated`. */
function startBuild(env: Record<string, string>, gated: boolean): { child: ChildProcess; output: () => string; ended: Promise<number | null> } {
  const dir = tmpDir('rbp-gate-');
  for (const d of ['layers', 'platform', 'app']) fs.mkdirSync(path.join(dir, d));
  fs.writeFileSync(path.join(dir, 'plan.toml'), '');
  const child = spawn(path.join(NODE_BP, 'bin', 'build'), [path.join(dir, 'layers'), path.join(dir, 'platform'), path.join(dir, 'plan.toml')], {
    cwd: path.join(dir, 'app'),
    env: {
      PATH: process.env.PATH!,
      CNB_BUILDPACK_DIR: NODE_BP,
      CNB_LAYERS_DIR: path.join(dir, 'layers'),
      CNB_PLATFORM_DIR: path.join(dir, 'platform'),
      CNB_BP_PLAN_PATH: path.join(dir, 'plan.toml'),
      ...env,
    },
    stdio: gated ? ['ignore', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const ended = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, output: () => out, ended };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('which buildpacks wait at the gate', () => {
  it('ours, built with the gate; not a copy whose program lacks its first line, nor another bin/build', () => {
    expect(waitsAtGate(NODE_BP)).toBe(true);
    const copy = tmpDir('rbp-gate-bp-');
    fs.cpSync(NODE_BP, copy, { recursive: true });
    expect(waitsAtGate(copy)).toBe(true);
    const program = path.join(copy, 'lib', 'build.cjs');
    fs.writeFileSync(program, fs.readFileSync(program, 'utf8').split('\n').slice(1).join('\n'));
    expect(waitsAtGate(copy)).toBe(false);
    const other = tmpDir('rbp-gate-other-');
    fs.cpSync(NODE_BP, other, { recursive: true });
    fs.writeFileSync(path.join(other, 'bin', 'build'), '#!/bin/sh\nexit 0\n');
    expect(waitsAtGate(other)).toBe(false);
  });
});

describe("dist's bin/build at the gate", () => {
  it('waits without a word until the gate opens, then builds', async () => {
    const b = startBuild({ [GATE_VAR]: String(GATE_FD) }, true);
    await sleep(1500);
    expect(b.child.exitCode).toBeNull();
    expect(b.output()).toBe('');
    (b.child.stdio[GATE_FD] as NodeJS.WritableStream).end(GATE_OPEN);
    // It went on: an app without package.json is refused with the buildpack's own words.
    expect(await b.ended).not.toBe(0);
    expect(b.output()).not.toBe('');
  });

  it('exits quietly when the gate closes without opening (the build was called off)', async () => {
    const b = startBuild({ [GATE_VAR]: String(GATE_FD) }, true);
    await sleep(500);
    (b.child.stdio[GATE_FD] as NodeJS.WritableStream & { destroy(): void }).destroy();
    expect(await b.ended).toBe(0);
    expect(b.output()).toBe('');
  });

  it('does not wait for a variable that names no pipe (set by hand)', async () => {
    const b = startBuild({ [GATE_VAR]: String(GATE_FD) }, false);
    expect(await b.ended).not.toBe(0);
    expect(b.output()).not.toBe('');
  });
});

/** A process's state letter (T: stopped), or undefined once it is gone. */
function stateOf(pid: number): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0];
  } catch {
    return undefined;
  }
}

async function until(ok: () => boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** `rbp build` of node-hello into `out`, stopped (SIGSTOP) once its first buildpack is prestarted. */
async function stoppedAtPrestart(out: string): Promise<{ rbp: ChildProcess; output: () => string; ended: Promise<number | null> }> {
  const child = spawn('node', ['--', path.join(ROOT, 'dist', 'rbp.js'), 'build', path.join(ROOT, 'fixtures', 'node-hello'), '--out', out, '--type', 'node'], {
    env: { ...process.env, NO_COLOR: '1', RBP_TEST_STOP_AT: 'prestarted' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const ended = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  await until(() => stateOf(child.pid!) === 'T', `rbp to stop at prestarted\n${output}`);
  return { rbp: child, output: () => output, ended };
}

describe('a rebuild through rbp', () => {
  const args = (out: string) => ['build', path.join(ROOT, 'fixtures', 'node-hello'), '--out', out, '--type', 'node'];

  it('the prestarted build waits for restore, however long it takes: every layer restored, none made again', async () => {
    const out = path.join(tmpDir(), 'out');
    expect((await rbp(args(out))).exitCode).toBe(0);
    const b = await stoppedAtPrestart(out);
    // rbp stopped before restore: a build that did not wait would have run on an empty layers folder by now.
    await sleep(3000);
    process.kill(b.rbp.pid!, 'SIGCONT');
    expect(await b.ended, b.output()).toBe(0);
    expect(b.output()).toMatch(/rbp\/node node: restored \[launch\] \[cache\]/);
    expect(b.output()).toMatch(/rbp\/node npm: restored \[launch\] \[cache\]/);
    expect(b.output()).not.toMatch(/: created \[launch\] \[cache\]/);
    // It printed nothing while it waited: its first line comes after restore's.
    expect(b.output().indexOf('- reused node')).toBeGreaterThan(b.output().indexOf('## Build'));
  });

  it('an rbp killed while its first buildpack waits leaves no process behind: the gate closes and the build ends', async () => {
    const out = path.join(tmpDir(), 'out');
    const b = await stoppedAtPrestart(out);
    // OUT's lock names the buildpack's process group (out-transaction.ts's recordGroup).
    const pgid = Number(fs.readFileSync(`${out}.rbp-lock`, 'utf8').split('\n')[1]);
    expect(pgid).toBeGreaterThan(0);
    expect(stateOf(pgid)).toBeDefined();
    process.kill(b.rbp.pid!, 'SIGKILL');
    await b.ended;
    await until(() => stateOf(pgid) === undefined || stateOf(pgid) === 'Z', `the waiting build (pid ${pgid}) to end`, 15_000);
  });
});
