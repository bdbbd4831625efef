/**
 * A temp folder left by an rbp killed with SIGKILL (its pid in the name, that process gone) is removed
 * by the next rbp (lib/platform/temp.ts: in the background, before rbp ends); a live process's stays.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryTempRoot } from '../../lib/memory-temp.ts';
import { copyFixture, rbp } from '../helpers/rbp.ts';

describe('private temp folders of dead rbp processes', () => {
  it('the next rbp detect removes them (platform env files, SSH key copies, where they are now and where they were); a living process’s folder stays', async () => {
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
      const r = await rbp(['detect', copyFixture('static-index-html')]);
      expect(r.exitCode, r.all).toBe(0);
      for (const s of stale) expect(fs.existsSync(s), s).toBe(false);
      expect(fs.existsSync(living)).toBe(true);
    } finally {
      for (const s of stale) fs.rmSync(s, { recursive: true, force: true });
      fs.rmSync(living, { recursive: true, force: true });
    }
  }, 60_000);
});
