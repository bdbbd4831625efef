import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { phpShim } from './php-command.ts';

// The shim's only job is to pick what runs and pass its arguments on: /bin/echo, under the names the
// shim looks for, shows what it would hand over.
describe('php shim', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-php-shim-'));
  const shim = path.join(dir, 'php');
  const server = path.join(dir, 'server', 'frankenphp');
  fs.mkdirSync(path.dirname(server));
  fs.symlinkSync('/bin/echo', server);
  fs.writeFileSync(shim, phpShim(server), { mode: 0o755 });
  const env = { PATH: process.env.PATH ?? '' };

  it('without a PHP CLI beside the server: `<server> php-cli` with the arguments unchanged, PHP_BINARY this command', async () => {
    const r = await execa(shim, ['-r', 'echo "a b";', "it's"], { env, extendEnv: false });
    expect(r.stdout).toBe(`php-cli -r echo "a b"; it's`);
    // printenv as the server: `printenv php-cli PHP_BINARY` prints what the server would see.
    const printenv = path.join(dir, 'printenv-server', 'frankenphp');
    fs.mkdirSync(path.dirname(printenv));
    fs.symlinkSync('/usr/bin/printenv', printenv);
    fs.writeFileSync(path.join(dir, 'env-shim'), phpShim(printenv), { mode: 0o755 });
    const seen = await execa(path.join(dir, 'env-shim'), ['PHP_BINARY'], { env, extendEnv: false, reject: false });
    expect(seen.stdout).toBe(path.join(dir, 'env-shim'));
  });
  it("runs the PHP CLI of the server's build when one is beside it (no php-cli, no PHP_BINARY of ours)", async () => {
    const withCli = path.join(dir, 'with-cli');
    fs.mkdirSync(withCli);
    fs.symlinkSync('/bin/echo', path.join(withCli, 'frankenphp'));
    fs.symlinkSync('/bin/echo', path.join(withCli, 'php'));
    fs.writeFileSync(path.join(dir, 'shim2'), phpShim(path.join(withCli, 'frankenphp')), { mode: 0o755 });
    expect((await execa(path.join(dir, 'shim2'), ['-v', '-d', 'a=b'], { env, extendEnv: false })).stdout).toBe('-v -d a=b');
  });
  it('runs RBP_TOOL_PHP instead when the operator sets it', async () => {
    const r = await execa(shim, ['x', 'y'], { env: { ...env, RBP_TOOL_PHP: '/bin/echo' }, extendEnv: false });
    expect(r.stdout).toBe('x y');
  });
  it("takes the server of its line's variable at run time, and quotes a path that holds shell characters", async () => {
    fs.writeFileSync(path.join(dir, 'shim85'), phpShim('/nonexistent/frankenphp', 'RBP_TOOL_FRANKENPHP_8_5'), { mode: 0o755 });
    expect(
      (
        await execa(path.join(dir, 'shim85'), ['z'], {
          env: { ...env, RBP_TOOL_FRANKENPHP_8_5: server, RBP_TOOL_FRANKENPHP: '/nonexistent' },
          extendEnv: false,
        })
      ).stdout,
    ).toBe('php-cli z');
    expect(phpShim('/srv/a "b" $c/frankenphp')).toContain('server="${RBP_TOOL_FRANKENPHP:-/srv/a \\"b\\" \\$c/frankenphp}"');
  });
});
