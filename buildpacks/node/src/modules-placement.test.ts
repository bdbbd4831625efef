import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findModuleDirs, keepModules, placeModules } from './modules-placement.ts';

let tmp: string;
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** An app as a workspace install leaves it: relative links out of node_modules, a workspace's own node_modules. */
function workspaceApp(root: string): string {
  const app = path.join(root, 'app');
  fs.mkdirSync(path.join(app, 'packages', 'greet', 'node_modules', 'ms'), { recursive: true });
  fs.writeFileSync(path.join(app, 'packages', 'greet', 'index.js'), 'greet');
  fs.writeFileSync(path.join(app, 'packages', 'greet', 'node_modules', 'ms', 'index.js'), 'ms 2.0.0');
  fs.mkdirSync(path.join(app, 'node_modules', '.bin'), { recursive: true });
  fs.mkdirSync(path.join(app, 'node_modules', 'ms'));
  fs.writeFileSync(path.join(app, 'node_modules', 'ms', 'index.js'), 'ms 2.1.3');
  fs.symlinkSync('../packages/greet', path.join(app, 'node_modules', 'greet'));
  fs.symlinkSync('../ms/index.js', path.join(app, 'node_modules', '.bin', 'ms'));
  return app;
}

describe('modules placement', () => {
  it('finds the root and workspace node_modules, not those inside node_modules', () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-placement-'));
    const app = workspaceApp(tmp);
    fs.mkdirSync(path.join(app, 'node_modules', 'ms', 'node_modules'));
    expect(findModuleDirs(app)).toEqual(['node_modules', path.join('packages', 'greet', 'node_modules')]);
  });

  it('keeps every link valid after the move, and after a reuse in another place', () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-placement-'));
    const app = workspaceApp(tmp);
    const layer = path.join(tmp, 'layer');
    const record = keepModules(app, layer);
    expect(record.links).toEqual([path.join('node_modules', 'greet')]);
    expect(fs.lstatSync(path.join(app, 'node_modules')).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(path.join(app, 'node_modules', 'greet', 'index.js'), 'utf8')).toBe('greet');
    expect(fs.readFileSync(path.join(app, 'packages', 'greet', 'node_modules', 'ms', 'index.js'), 'utf8')).toBe('ms 2.0.0');
    // Links inside the moved folder stay relative.
    expect(fs.readlinkSync(path.join(layer, 'node_modules', '.bin', 'ms'))).toBe('../ms/index.js');

    // The next build: a fresh copy of the source elsewhere, the layer reused.
    const moved = path.join(tmp, 'moved');
    fs.mkdirSync(path.join(moved, 'packages', 'greet'), { recursive: true });
    fs.writeFileSync(path.join(moved, 'packages', 'greet', 'index.js'), 'greet moved');
    placeModules(layer, moved);
    expect(fs.readFileSync(path.join(moved, 'node_modules', 'greet', 'index.js'), 'utf8')).toBe('greet moved');
    expect(fs.readFileSync(path.join(moved, 'packages', 'greet', 'node_modules', 'ms', 'index.js'), 'utf8')).toBe('ms 2.0.0');
  });
});
