/**
 * A temp folder left by an rbp killed with SIGKILL (its pid in the name, that process gone) is removed
 * by the next rbp detect, build or deploy (lib/platform/temp.ts: in the background, before rbp ends);
 * a live process's stays. `rbp detect` makes its platform folder only for a buildpack that needs one
 * (a third party's bin/detect): our detects compiled into rbp are handed the variables in memory, so
 * an automatic detect makes no folder, and still sweeps: a killed build's folder holds secrets.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { memoryTempRoot } from '../../lib/memory-temp.ts';
import { copyFixture, RBP, tmpDir } from '../helpers/rbp.ts';

/** A buildpack of no one here: its bin/detect prints a variable from the platform folder's env/ and passes. */
function thirdPartyBuildpack(): string {
  const bp = tmpDir('rbp-sweep-bp-');
  fs.mkdirSync(path.join(bp, 'bin'));
  fs.writeFileSync(path.join(bp, 'buildpack.toml'), 'api = "0.10"\n[buildpack]\nid = "test/third-party"\nversion = "0.0.1"\n');
  fs.writeFileSync(path.join(bp, 'bin', 'detect'), '#!/bin/sh\nprintf "greeting from the platform folder: %s\\n" "$(cat "$CNB_PLATFORM_DIR/env/GREETING")"\n', {
    mode: 0o755,
  });
  fs.writeFileSync(path.join(bp, 'bin', 'build'), '#!/bin/sh\n', { mode: 0o755 });
  return bp;
}

/**
 * Runs `rbp detect ...args` and returns, with its result, the names of the entries it made in the
 * folders where rbp makes its temp folders (those carrying its pid), seen by inotify (fs.watch) as
 * they were made: rbp removes its folders before it ends.
 */
async function detectWatched(args: string[]) {
  const roots = [...new Set([memoryTempRoot().dir, os.tmpdir()])];
  const seen: string[] = [];
  const watchers = roots.map((r) => fs.watch(r, (_event, name) => name && seen.push(name)));
  try {
    const child = execa(process.execPath, ['--', RBP, 'detect', ...args], { reject: false, all: true, env: { NO_COLOR: '1' } });
    const r = await child;
    // inotify delivers a folder's events in order: once a mark made after rbp ended is seen, all of rbp's are.
    const marks = roots.map((r) => fs.mkdtempSync(path.join(r, 'rbp-sweep-test-mark-')));
    const markNames = marks.map((m) => path.basename(m));
    for (let i = 0; i < 500 && !markNames.every((m) => seen.includes(m)); i++) await new Promise((res) => setTimeout(res, 10));
    for (const m of marks) fs.rmSync(m, { recursive: true, force: true });
    expect(
      markNames.filter((m) => !seen.includes(m)),
      'inotify events of the marks',
    ).toEqual([]);
    return { r, made: [...new Set(seen.filter((n) => n.includes(`-${child.pid}-`)))] };
  } finally {
    for (const w of watchers) w.close();
  }
}

describe('private temp folders of dead rbp processes', () => {
  it('an rbp detect that makes a platform folder (a third-party buildpack in the order) removes them (platform env files, SSH key copies, where they are now and where they were); a living process’s folder stays', async () => {
    const dead = spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).stdout.trim();
    const root = memoryTempRoot().dir;
    const stale = [
      fs.mkdtempSync(path.join(root, `rbp-platform-${dead}-`)),
      fs.mkdtempSync(path.join(root, `rbp-ssh-${dead}-`)),
      fs.mkdtempSync(path.join(os.tmpdir(), `rbp-platform-${dead}-`)),
    ];
    fs.mkdirSync(path.join(stale[0]!, 'env'));
    fs.writeFileSync(path.join(stale[0]!, 'env', 'NPM_TOKEN'), 'secret');
    fs.writeFileSync(path.join(stale[1]!, 'key-0'), 'KEY');
    const living = fs.mkdtempSync(path.join(root, `rbp-platform-${process.pid}-`));
    try {
      const { r, made } = await detectWatched(['-b', thirdPartyBuildpack(), '--env', 'GREETING=hello', copyFixture('static-index-html')]);
      expect(r.exitCode, r.all).toBe(0);
      expect(r.stdout).toContain('greeting from the platform folder: hello');
      expect(made.filter((n) => n.startsWith('rbp-platform-'))).toHaveLength(1);
      for (const s of stale) expect(fs.existsSync(s), s).toBe(false);
      expect(fs.existsSync(living)).toBe(true);
    } finally {
      for (const s of stale) fs.rmSync(s, { recursive: true, force: true });
      fs.rmSync(living, { recursive: true, force: true });
    }
  }, 60_000);
});
