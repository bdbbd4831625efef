/**
 * The Procfile as Heroku's buildpacks read it (procfile.ts), and its place among the start methods:
 * CC_RUN_COMMAND > scripts.start > the Procfile's web > main. The built fixture (node-procfile)
 * is served by test/node/fixtures-npm.test.ts; its worker runs in test/node/procfile.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderedUserError as rendered } from '../../../test/helpers/user-error.ts';
import { startMethod } from './package-json.ts';
import { parseProcfile } from './procfile.ts';

describe('Procfile', () => {
  it('reads type: command lines, skipping blank lines and comments; a command keeps its colons', () => {
    const p = parseProcfile('# processes\n\nweb: node server.js --port $PORT\n  # indented comment\nworker:node worker.js\nrelease-tasks: echo a: b\n');
    expect([...p.processes]).toEqual([
      ['web', 'node server.js --port $PORT'],
      ['worker', 'node worker.js'],
      ['release-tasks', 'echo a: b'],
    ]);
    expect(p.warnings).toEqual([]);
  });

  it('corrects a type written with capitals, _ or leading spaces, with a warning; a type given twice keeps the last', () => {
    const p = parseProcfile('Web: a\n  my_worker: b\nweb: c\n');
    expect([...p.processes]).toEqual([
      ['my-worker', 'b'],
      ['web', 'c'],
    ]);
    expect(p.warnings).toEqual([
      'Procfile key "Web" has been corrected to "web" (Procfile:1): please update your Procfile',
      'Procfile key "  my_worker" has been corrected to "my-worker" (Procfile:2): please update your Procfile',
      'Procfile: process web is defined twice; the last one (Procfile:3) is used',
    ]);
    expect(parseProcfile('# nothing\n').warnings).toEqual(['Procfile: no process is defined in Procfile']);
    expect(parseProcfile(`${'a'.repeat(63)}: x`).processes.size).toBe(1);
  });

  it('refuses a line that is not type: command, naming the line, never showing it', () => {
    expect(rendered(() => parseProcfile('web: node s.js\nnode worker.js\n'))).toMatchSnapshot();
    expect(rendered(() => parseProcfile('web:\n'))).toContain('Give process web a command after the colon');
    for (const bad of ['-web: x', 'web-: x', 'w.e.b: x', `${'a'.repeat(64)}: x`, ': x'])
      expect(
        rendered(() => parseProcfile(bad)),
        bad,
      ).toContain('node/procfile/invalid');
  });

  it('starts the app after CC_RUN_COMMAND and scripts.start, before main', () => {
    const app = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-procfile-'));
    fs.writeFileSync(path.join(app, 'Procfile'), 'web: node web.js\nworker: node w.js\n');
    expect(startMethod({ main: 'main.js' }, {}, app)).toMatchObject({ kind: 'procfile', command: 'node web.js' });
    expect(startMethod({ main: 'main.js', scripts: { start: 'node start.js' } }, {}, app)).toEqual({ kind: 'start-script', command: 'node start.js' });
    expect(startMethod({}, { CC_RUN_COMMAND: 'node run.js' }, app)).toEqual({ kind: 'run-command', command: 'node run.js' });
    fs.writeFileSync(path.join(app, 'Procfile'), 'worker: node w.js\n');
    expect(startMethod({ main: 'main.js' }, {}, app)).toEqual({ kind: 'main', file: 'main.js' });
    expect(startMethod({}, {}, app)).toBeUndefined();
  });
});
