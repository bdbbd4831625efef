import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { phpShim } from './php-command.ts';

// The shim's only job is to pass its arguments on: /bin/echo shows what it would hand the server.
describe('php shim', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-php-shim-'));
  const shim = path.join(dir, 'php');
  fs.writeFileSync(shim, phpShim('/bin/echo'), { mode: 0o755 });
  const env = { PATH: process.env.PATH ?? '' };

  it('runs `<server> php-cli` with the arguments unchanged', async () => {
    const r = await execa(shim, ['-r', 'echo "a b";', "it's"], { env, extendEnv: false });
    expect(r.stdout).toBe(`php-cli -r echo "a b"; it's`);
  });
  it('runs RBP_TOOL_PHP instead when the operator sets it', async () => {
    const r = await execa(shim, ['x', 'y'], { env: { ...env, RBP_TOOL_PHP: '/bin/echo' }, extendEnv: false });
    expect(r.stdout).toBe('x y');
  });
  it('quotes a server path that holds shell characters', () => {
    expect(phpShim('/srv/a "b" $c/frankenphp')).toContain('exec "${RBP_TOOL_FRANKENPHP:-/srv/a \\"b\\" \\$c/frankenphp}" php-cli "$@"');
  });
});
