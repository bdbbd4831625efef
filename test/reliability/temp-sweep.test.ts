/**
 * A temp folder left by an rbp killed with SIGKILL (its pid in the name, that process gone) is removed
 * by the next rbp (lib/platform/temp.ts: in the background, before rbp ends); a live process's stays.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { copyFixture, rbp } from '../helpers/rbp.ts';

describe('private temp folders of dead rbp processes', () => {
  it('the next rbp detect removes them; a living process’s folder stays', async () => {
    const dead = spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).stdout.trim();
    const stale = fs.mkdtempSync(path.join(os.tmpdir(), `rbp-platform-${dead}-`));
    fs.mkdirSync(path.join(stale, 'env'));
    fs.writeFileSync(path.join(stale, 'env', 'NPM_TOKEN'), 'secret');
    const living = fs.mkdtempSync(path.join(os.tmpdir(), `rbp-platform-${process.pid}-`));
    try {
      const r = await rbp(['detect', copyFixture('static-index-html')]);
      expect(r.exitCode, r.all).toBe(0);
      expect(fs.existsSync(stale)).toBe(false);
      expect(fs.existsSync(living)).toBe(true);
    } finally {
      fs.rmSync(stale, { recursive: true, force: true });
      fs.rmSync(living, { recursive: true, force: true });
    }
  }, 60_000);
});
