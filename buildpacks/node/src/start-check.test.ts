import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Manager } from '../../../lib/js-project/package-managers.ts';
import type { PackageJson, StartMethod } from './package-json.ts';
import { runtimesCalled, scriptFile } from './start-check.ts';

describe('scriptFile: the file a start command runs', () => {
  it('skips flags, variables and exec', () => {
    expect(scriptFile('node dist/index.js')).toBe('dist/index.js');
    expect(scriptFile('NODE_ENV=production node --enable-source-maps -r dotenv/config .output/server/index.mjs')).toBe('.output/server/index.mjs');
    expect(scriptFile('exec node server.js')).toBe('server.js');
    expect(scriptFile('npm run build && node build/app.cjs')).toBe('build/app.cjs');
  });
  it('says nothing for commands that run no file', () => {
    expect(scriptFile('next start')).toBeUndefined();
    expect(scriptFile('node -e "1"')).toBeUndefined();
    expect(scriptFile('bun run start')).toBeUndefined();
  });
});

describe('runtimesCalled: Bun, when the app calls it and another manager installs it', () => {
  const app = (files: Record<string, string> = {}) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-start-check-'));
    for (const [f, c] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), c);
    return dir;
  };
  const start = (command: string): StartMethod => ({ kind: 'start-script', command });
  const called = (dir: string, pkg: PackageJson, s: StartMethod | undefined, manager: Manager = 'npm') =>
    runtimesCalled(dir, pkg, s, manager).map((c) => [c.manager, c.where, c.command]);

  it('finds bun or bunx as the command of any part of the start command, a script or a Procfile process', () => {
    expect(called(app(), { scripts: { start: 'bun server.ts' } }, start('bun server.ts'))).toEqual([['bun', 'scripts.start', 'bun server.ts']]);
    expect(called(app(), {}, { kind: 'run-command', command: 'PORT=1 exec bunx serve' })).toEqual([['bun', 'CC_RUN_COMMAND', 'PORT=1 exec bunx serve']]);
    expect(called(app(), { scripts: { start: 'node a.js', build: 'tsc && cross-env X=1 bun build.ts' } }, start('node a.js'))).toEqual([
      ['bun', 'scripts.build', 'tsc && cross-env X=1 bun build.ts'],
    ]);
    expect(called(app({ Procfile: 'web: node a.js\nworker: bun worker.ts\n' }), {}, { kind: 'main', file: 'a.js' })).toEqual([
      ['bun', 'Procfile worker', 'bun worker.ts'],
    ]);
  });

  it('says nothing when Bun installs, or when bun is only a word of a command', () => {
    expect(called(app(), { scripts: { start: 'bun server.ts' } }, start('bun server.ts'), 'bun')).toEqual([]);
    expect(called(app(), { scripts: { start: 'echo bun && node bun.js' } }, start('echo bun && node bun.js'))).toEqual([]);
  });
});
