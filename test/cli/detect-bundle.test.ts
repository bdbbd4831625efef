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
  for (const f of ['rbp.js', 'rbp.bundle.cjs', 'cli-detect.bundle.cjs', 'execa.cjs', 'tar.cjs', 'yaml.cjs', 'undici.cjs', 'package.json'])
    fs.copyFileSync(path.join(ROOT, 'dist', f), path.join(dir, f));
  fs.symlinkSync(path.join(ROOT, 'dist', 'buildpacks'), path.join(dir, 'buildpacks'));
  app = tmpDir('rbp-detect-bundle-app-');
  fs.writeFileSync(path.join(app, 'index.php'), '<?php echo "hi";\n');
});

describe('the detect bundle', () => {
  it('holds the CLI without the build, launch, deploy and packaging modules', () => {
    const text = fs.readFileSync(path.join(dir, 'cli-detect.bundle.cjs'), 'utf8');
    expect(text).toContain('// lib/platform/detect.ts');
    for (const m of ['launcher.ts', 'deploy.ts', 'commands/build.ts', 'commands/package.ts', 'commands/prune.ts'])
      expect(text).not.toContain(`// lib/platform/${m}\n`);
    // execa (third-party buildpacks' detects, run as processes) and tar (buildpackages in an order) are files of their own.
    expect(text).not.toMatch(/\/\/ node_modules\/(execa|tar)\//);
    // Nor the registry client and semver, which the package-manager table's detect-time use does not need.
    expect(text).not.toMatch(/\/\/ node_modules\/semver\//);
    expect(text).not.toContain('// lib/deps/npm.ts\n');
    // The commands it leaves out are nearly half of rbp's own code (the libraries are beside both).
    expect(fs.statSync(path.join(dir, 'cli-detect.bundle.cjs')).size).toBeLessThan(fs.statSync(path.join(dir, 'rbp.bundle.cjs')).size * 0.6);
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

  it("runs a third-party buildpack's bin/detect as a process, with execa from its file beside the bundle", async () => {
    const bp = tmpDir('rbp-detect-bundle-bp-');
    fs.mkdirSync(path.join(bp, 'bin'));
    fs.writeFileSync(path.join(bp, 'buildpack.toml'), 'api = "0.10"\n[buildpack]\nid = "test/third-party"\nversion = "0.0.1"\n');
    fs.writeFileSync(path.join(bp, 'bin', 'detect'), '#!/bin/sh\necho "third-party detect ran"\n', { mode: 0o755 });
    fs.writeFileSync(path.join(bp, 'bin', 'build'), '#!/bin/sh\n', { mode: 0o755 });
    const d = await run('detect', '-b', bp, app);
    expect(d.exitCode).toBe(0);
    expect(d.stdout).toContain('third-party detect ran');
    expect(d.stdout).toMatch(/group: test\/third-party@0\.0\.1/);
    expect(caches()).toEqual(['cli-detect.bundle.cjs.v8cache']);
  });
});
