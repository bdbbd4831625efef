/**
 * Every .sh file of the repository passes shellcheck (warnings and errors; `-x` follows the files a
 * script sources): the launch's own sh (lib/launch/sh/) above all, which every app image runs. In CI
 * shellcheck must be there (.ci/run installs it); elsewhere the test says it is missing and is skipped.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { ROOT } from '../helpers/rbp.ts';
import { requirement } from '../helpers/requirement.ts';

const found = spawnSync('shellcheck', ['--version'], { encoding: 'utf8' }).status === 0;
const shellcheck = requirement(found, { what: 'shellcheck', how: 'apt-get install shellcheck', who: 'shellcheck.test.ts' });

it.skipIf(shellcheck.skip)('every .sh file of the repository passes shellcheck', () => {
  shellcheck.value();
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.sh'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
  expect(files).toEqual(expect.arrayContaining(['lib/launch/sh/rbp-launch.sh', 'lib/launch/sh/supervise.sh']));
  const r = spawnSync('shellcheck', ['-x', '--severity=warning', '--format=gcc', ...files], { cwd: ROOT, encoding: 'utf8' });
  expect(r.stdout + r.stderr).toBe('');
  expect(r.status).toBe(0);
});
