/**
 * Install mechanics and caches: the server from the mirror (fixture artifact + .sha256, never run),
 * refused without a checksum or with a wrong one, reused from the cache; vendor/ restored without
 * running Composer until the lock file, the PHP version or the flags change; the `php` command.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, copyFixture, rbp, tmpDir } from '../helpers/rbp.ts';
import { envArgs, makeMirror, operatorEnv, serverAsset } from './support.ts';

let mirror: string;
let work: string;
beforeAll(() => {
  mirror = makeMirror();
  work = tmpDir('rbp-php-install-');
});
afterAll(() => {
  fs.rmSync(mirror, { recursive: true, force: true });
  fs.rmSync(work, { recursive: true, force: true });
});

const build = (app: string, out: string, env: Record<string, string> = {}, operator: Record<string, string> = {}, extra: string[] = []) =>
  rbp(['build', app, '--out', out, '--type', 'phpserver', '--cache', `${out}.cache`, ...envArgs(env), ...extra], { env: operatorEnv(mirror, operator) });

describe('application server install', () => {
  it('installs the pinned version from the mirror, verified against its .sha256, into a cached launch layer', async () => {
    const out = path.join(work, 'mirror', 'out');
    const r = await build(path.join(FIXTURES, 'php-index-php'), out);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain(`download ${path.join(mirror, 'frankenphp', '1.9.1', serverAsset())}`);
    expect(r.all).toContain('verified sha256 (the mirror)');
    const layer = path.join(out, 'layers', 'rbp_phpserver', 'frankenphp');
    expect(fs.readFileSync(path.join(layer, 'bin', 'frankenphp'), 'utf8')).toContain('frankenphp 1.9.1 release asset');
    const toml = fs.readFileSync(`${layer}.toml`, 'utf8');
    expect(toml).toMatch(/launch = true/);
    expect(toml).toMatch(/cache = true/);
    expect(toml).toContain('version = "1.9.1"');

    const again = await build(path.join(FIXTURES, 'php-index-php'), out);
    expect(again.exitCode, again.all).toBe(0);
    expect(again.all).toContain('reused frankenphp 1.9.1 (cached)');
    expect(again.all).not.toContain('download ');
  });

  it('with RBP_REQUIRE_CHECKSUMS=1, refuses the release download (upstream publishes no checksum) and says how to provide one', async () => {
    const out = path.join(work, 'no-mirror', 'out');
    const r = await build(path.join(FIXTURES, 'php-index-php'), out, {}, { RBP_DEPENDENCY_MIRROR: '', RBP_REQUIRE_CHECKSUMS: '1' });
    expect(r.exitCode).not.toBe(0);
    expect(r.all).toContain('(error id: deps/no-checksum)');
    expect(r.all).toContain('frankenphp 1.9.1 has no checksum to verify its download');
    expect(r.all).toContain('https://github.com/php/frankenphp/releases/download/v1.9.1/');
    expect(r.all).toContain('RBP_DEPENDENCY_MIRROR');
    expect(r.all).toContain('RBP_TOOL_FRANKENPHP=<path>');
    expect(fs.existsSync(out)).toBe(false);
  });

  it('refuses a mirror file that does not match its checksum', async () => {
    const bad = makeMirror(['1.9.1']);
    const file = path.join(bad, 'frankenphp', '1.9.1', serverAsset());
    fs.writeFileSync(`${file}.sha256`, `${crypto.createHash('sha256').update('something else').digest('hex')}  ${serverAsset()}\n`);
    const r = await build(path.join(FIXTURES, 'php-index-php'), path.join(work, 'bad-mirror', 'out'), {}, { RBP_DEPENDENCY_MIRROR: bad });
    expect(r.exitCode).not.toBe(0);
    expect(r.all).toContain('(error id: deps/checksum-mismatch)');
    fs.rmSync(bad, { recursive: true, force: true });
  });

  it('gives the `php` command on the build and launch PATH: RBP_TOOL_PHP, the PHP CLI beside the server, or its php-cli', async () => {
    const out = path.join(work, 'shim', 'out');
    const r = await build(path.join(FIXTURES, 'php-task'), out, {}, {}, ['--task', 'php bin/hello.php']);
    expect(r.exitCode, r.all).toBe(0);
    const shim = fs.readFileSync(path.join(out, 'layers', 'rbp_phpserver', 'php', 'bin', 'php'), 'utf8');
    // It names the server and its own files from its own path: no folder of the build.
    expect(shim).toContain('server="${RBP_TOOL_FRANKENPHP:-${layers}/frankenphp/bin/frankenphp}"');
    expect(shim).toContain('exec "$server" php-cli "$layer/share/php-cli.php" "$@"');
    expect(shim).not.toContain(out);
    expect(r.all).toContain('php runs RBP_TOOL_PHP=');
    // Without RBP_TOOL_PHP, the mirror's server has no PHP CLI beside it: the build says what php is limited to.
    const bare = await build(path.join(FIXTURES, 'php-task'), path.join(work, 'shim-bare', 'out'), {}, { RBP_TOOL_PHP: '' });
    expect(bare.exitCode, bare.all).toBe(0);
    expect(bare.all).toContain('the application server has no PHP CLI beside it: php runs its php-cli sub-command');
    expect(shim).toContain('if [ -n "${RBP_TOOL_PHP:-}" ]; then exec "$RBP_TOOL_PHP" "$@"; fi');
    const dry = JSON.parse((await rbp(['run', out, '--dry-run'])).stdout);
    expect(dry.process).toBe('task');
    expect(dry.env.PATH.split(':')[0]).toBe(path.join(out, 'layers', 'rbp_phpserver', 'php', 'bin'));
  });
});

describe('vendor/ cache', () => {
  it('restores vendor/ without running Composer until the lock file, PHP version or flags change', async () => {
    const app = copyFixture('php-composer');
    const out = path.join(work, 'vendor', 'out');
    const first = await build(app, out);
    expect(first.exitCode, first.all).toBe(0);
    expect(first.all).toContain('Installing dependencies from lock file');

    const second = await build(app, out);
    expect(second.exitCode, second.all).toBe(0);
    expect(second.all).toContain('restore vendor/ from the cache (composer.lock, PHP');
    expect(second.all).toContain('Composer not run');
    expect(second.all).not.toContain('Installing dependencies from lock file');
    const greeter = path.join('vendor', 'rbp-fixtures', 'greeter', 'src', 'Greeter.php');
    expect(fs.existsSync(path.join(out, 'workspace', greeter))).toBe(true);
    // DESIGN: dependency caches move or link, never copy: the app's vendor/ and the cache share the file.
    const cached = path.join(`${out}.cache`, 'rbp_phpserver', 'vendor', greeter);
    expect(fs.statSync(path.join(out, 'workspace', greeter)).ino).toBe(fs.statSync(cached).ino);

    const flags = await build(app, out, { CC_PHP_COMPOSER_FLAGS: '--no-interaction --no-progress' });
    expect(flags.exitCode, flags.all).toBe(0);
    expect(flags.all).toContain(
      'vendor/ cache: flags changed (--no-interaction --no-progress --no-scripts --no-dev → --no-interaction --no-progress --no-dev)',
    );
    expect(flags.all).toContain('Installing dependencies from lock file');

    const lock = JSON.parse(fs.readFileSync(path.join(app, 'composer.lock'), 'utf8'));
    lock['content-hash'] = '00000000000000000000000000000000';
    fs.writeFileSync(path.join(app, 'composer.lock'), JSON.stringify(lock, null, 4));
    const locked = await build(app, out, { CC_PHP_COMPOSER_FLAGS: '--no-interaction --no-progress' });
    expect(locked.exitCode, locked.all).toBe(0);
    expect(locked.all).toMatch(/vendor\/ cache: sha256 changed/);
    expect(locked.all).toContain('Installing dependencies from lock file');
  });

  it("fails with Composer's own message when the install fails", async () => {
    const app = copyFixture('php-composer');
    fs.rmSync(path.join(app, 'packages', 'greeter'), { recursive: true });
    const r = await build(app, path.join(work, 'composer-fails', 'out'));
    expect(r.exitCode).not.toBe(0);
    expect(r.all).toContain('(error id: phpserver/composer/install-failed)');
    expect(r.all).toContain('Composer could not install the dependencies');
  });
});

describe('instances (contract, limit 1)', () => {
  it("rbp run and rbp deploy of a phpserver app on pico are refused with the contract's rule, before anything starts", async () => {
    const out = path.join(work, 'pico', 'out');
    expect((await build(path.join(FIXTURES, 'php-index-php'), out)).exitCode).toBe(0);
    // The launch's planner refuses it, dry run or not.
    for (const extra of [[], ['--dry-run']]) {
      const r = await rbp(['run', out, '--instance', 'pico', ...extra]);
      // 1 from the launch process; a dry run that cannot print its plan is rbp's launch failure (82).
      expect(r.exitCode, r.all).toBe(extra.length ? 82 : 1);
      expect(r.all).toContain('The phpserver runtime cannot run on a pico instance');
      expect(r.all).toContain('Seen: instance size: "pico" (RBP_INSTANCE_SIZE (rbp run or rbp deploy --instance))');
      expect(r.all).toContain('(error id: phpserver/instance/pico)');
      expect(r.all).not.toContain('- exec ');
    }
    // Behind a request flow too.
    const flow = await rbp(['run', out, '--instance', 'PICO', '--env', 'CC_REQUEST_FLOW=block']);
    expect(flow.exitCode, flow.all).not.toBe(0);
    expect(flow.all).toContain('(error id: phpserver/instance/pico)');
    // deploy builds for the instance first: the build refuses it.
    const deploy = await rbp(
      ['deploy', path.join(FIXTURES, 'php-index-php'), '--type', 'phpserver', '--out', path.join(work, 'pico-deploy', 'out'), '--instance', 'pico'],
      { env: operatorEnv(mirror) },
    );
    expect(deploy.exitCode, deploy.all).not.toBe(0);
    expect(deploy.all).toContain('(error id: phpserver/instance/pico)');
    // Any other instance starts as before (the dry run shows the plan).
    const xs = await rbp(['run', out, '--instance', 'S', '--dry-run', '--json']);
    expect(xs.exitCode, xs.all).toBe(0);
  });
});
