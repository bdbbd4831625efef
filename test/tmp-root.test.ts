/** Every temporary folder of a test run lives under the run's own root, which the run removes (test/setup/tmp-root.ts). */
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { tmpDir } from './helpers/rbp.ts';

it('os.tmpdir() is the run’s own folder, and tmpDir() makes folders inside it', () => {
  expect(path.basename(os.tmpdir())).toMatch(/^rbp-tests-[0-9a-f]{12}$/);
  expect(path.dirname(tmpDir())).toBe(os.tmpdir());
});
