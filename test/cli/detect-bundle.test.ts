/**
 * dist/rbp.js runs `rbp detect`, `--version` and `help` from dist/cli-detect.bundle.cjs, the CLI
 * without the build, run, deploy and packaging code, and every other command from rbp.bundle.cjs
 * (scripts/build.mjs): each bundle with its own code cache. A copy of rbp.js without the detect
 * bundle runs everything from the whole CLI.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { beforeEach, describe, expect, it } from 'vitest';
import { ROOT, tmpDir } from '../helpers/rbp.ts';

let dir: string;
let app: string;
const run = (...args: string[]) => execa('node', ['--', path.join(dir, 'rbp.js'), ...args], { reject: false, env: { NO_COLOR: '1' } });
const caches = () =>
  fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.v8cache'))
    .sort();

beforeEach(() => {
  dir = tmpDir('rbp-detect-bundle-');
  for (const f of ['rbp.js', 'rbp.bundle.cjs', 'cli-detect.bundle.cjs', 'package.json']) fs.copyFileSync(path.join(ROOT, 'dist', f), path.join(dir, f));
  fs.symlinkSync(path.join(ROOT, 'dist', 'buildpacks'), path.join(dir, 'buildpacks'));
  app = tmpDir('rbp-detect-bundle-app-');
  fs.writeFileSync(path.join(app, 'index.php'), '<?php echo "hi";\n');
});

describe('the detect bundle', () => {
  it('holds the CLI without the build, launch, deploy and packaging modules', () => {
    const text = fs.readFileSync(path.join(dir, 'cli-detect.bundle.cjs'), 'utf8');
    expect(text).toContain('// lib/platform/detect.ts');
    for (const m of ['build.ts', 'launcher.ts', 'deploy.ts', 'cli-package.ts', 'cli-prune.ts']) expect(text).not.toContain(`// lib/platform/${m}\n`);
    expect(fs.statSync(path.join(dir, 'cli-detect.bundle.cjs')).size).toBeLessThan(fs.statSync(path.join(dir, 'rbp.bundle.cjs')).size / 2);
  });

  it('runs rbp detect and --version; other commands run the whole CLI', async () => {
    const d = await run('detect', app);
    expect(d.exitCode).toBe(0);
    expect(d.stdout).toMatch(/group: rbp\/phpserver@/);
    expect(caches()).toEqual(['cli-detect.bundle.cjs.v8cache']);
    expect((await run('--version')).stdout).toMatch(/^rbp \d+\.\d+\.\d+ \(node v/);
    expect((await run('build', '--help')).exitCode).toBe(0);
    expect(caches()).toEqual(['cli-detect.bundle.cjs.v8cache', 'rbp.bundle.cjs.v8cache']);
    // The same detect either way.
    fs.rmSync(path.join(dir, 'cli-detect.bundle.cjs'));
    const whole = await run('detect', app);
    expect(whole.exitCode).toBe(0);
    expect(whole.stdout).toBe(d.stdout);
  });
});
