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

  it('keeps every link valid and relative after the move, and after a reuse by a fresh copy of the app', () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-placement-'));
    const app = workspaceApp(tmp);
    const layer = path.join(tmp, 'layers', 'modules');
    keepModules(app, layer);
    expect(fs.readlinkSync(path.join(app, 'node_modules'))).toBe('../layers/modules/node_modules');
    expect(fs.readFileSync(path.join(app, 'node_modules', 'greet', 'index.js'), 'utf8')).toBe('greet');
    expect(fs.readFileSync(path.join(app, 'packages', 'greet', 'node_modules', 'ms', 'index.js'), 'utf8')).toBe('ms 2.0.0');
    // The link out of the moved folder leads back into the app, relatively; those inside it stay as they were.
    expect(fs.readlinkSync(path.join(layer, 'node_modules', 'greet'))).toBe('../../../app/packages/greet');
    expect(fs.readlinkSync(path.join(layer, 'node_modules', '.bin', 'ms'))).toBe('../ms/index.js');

    // The next build: a fresh copy of the source at the same place, the layer reused.
    fs.rmSync(app, { recursive: true });
    fs.mkdirSync(path.join(app, 'packages', 'greet'), { recursive: true });
    fs.writeFileSync(path.join(app, 'packages', 'greet', 'index.js'), 'greet again');
    placeModules(layer, app);
    expect(fs.readFileSync(path.join(app, 'node_modules', 'greet', 'index.js'), 'utf8')).toBe('greet again');
    expect(fs.readFileSync(path.join(app, 'packages', 'greet', 'node_modules', 'ms', 'index.js'), 'utf8')).toBe('ms 2.0.0');
    // No link names the build's folders: moved elsewhere together (as into an image), the app still finds its modules.
    const image = path.join(tmp, 'image');
    fs.mkdirSync(image);
    for (const d of ['app', 'layers']) fs.renameSync(path.join(tmp, d), path.join(image, d));
    expect(fs.readFileSync(path.join(image, 'app', 'node_modules', 'greet', 'node_modules', 'ms', 'index.js'), 'utf8')).toBe('ms 2.0.0');
  });
});
