/**
 * fixtures/node-procfile built for real: the Procfile's other process types are processes of the
 * app (`rbp run OUT --process worker`), run with /bin/sh -c on the app's Node.js with
 * NODE_ENV=production; a Procfile that cannot be read fails detection with its line. Its web is
 * served by fixtures-npm.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { copyFixture, rbp, tmpDir } from '../helpers/rbp.ts';

it('a Procfile type beside web runs as its own process, in the launch environment', async () => {
  const out = path.join(tmpDir('rbp-procfile-'), 'out');
  const built = await rbp(['build', copyFixture('node-procfile'), '--out', out]);
  expect(built.exitCode, built.all).toBe(0);
  expect(built.all).toContain('- process worker: /bin/sh -c node worker.js --once');
  const worker = await rbp(['run', out, '--process', 'worker']);
  expect(worker.exitCode, worker.all).toBe(0);
  expect(worker.stdout).toMatch(/^worker ran \(--once\), NODE_ENV=production, node v24\.\d+\.\d+$/m);
  // Its dry run shows the command itself: only web runs the launch entrypoint.
  const dry = await rbp(['run', out, '--process', 'worker', '--dry-run']);
  expect(JSON.parse(dry.stdout)).toMatchObject({ process: 'worker', argv: ['/bin/sh', '-c', 'node worker.js --once'] });
}, 180_000);

it('a Procfile line that is not type: command fails detection, naming the line', async () => {
  const app = copyFixture('node-procfile');
  fs.writeFileSync(path.join(app, 'Procfile'), 'web: node server.js\nnode worker.js\n');
  const r = await rbp(['detect', app, '--type', 'node']);
  expect(r.exitCode).toBe(21);
  expect(r.all).toContain(`! Seen: Procfile (${path.join(app, 'Procfile')}:2)`);
  expect(r.all).toContain('(error id: node/procfile/invalid)');
});
