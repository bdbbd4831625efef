/**
 * `php` as an app's hooks, tasks, Composer and CC_RUN_COMMAND see it (issue "PHP as the contract
 * ships it", item 4): the PHP CLI of the application server's own build, found beside the real server
 * (RBP_TOOL_FRANKENPHP, no RBP_TOOL_PHP), behaving as PHP's CLI does: -v, -m, -i, -r, -d, -f, a
 * script on stdin, exit codes, PHP_BINARY a php that works, and the project's php.ini (PHPRC). Each
 * command runs as the app's CC_RUN_COMMAND through `rbp run`, in the launch environment.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { FIXTURES, rbp, tmpDir } from '../helpers/rbp.ts';
import { SERVER, envArgs, itWithServer, makeMirror, operatorEnv } from './support.ts';

/** The contract's extensions the server's build carries, as `php -m` lists them (opcache as Zend OPcache). */
const MODULES =
  'amqp apcu ast bcmath bz2 calendar ctype curl dba dom exif fileinfo filter ftp gd gmp gettext iconv igbinary imagick intl ldap mbstring memcache memcached mysqli mysqlnd openssl pcntl PDO pdo_mysql pdo_pgsql pdo_sqlite pgsql Phar posix protobuf readline redis session shmop SimpleXML soap sockets sodium sqlite3 ssh2 sysvmsg sysvsem sysvshm tidy tokenizer xml xmlreader xmlwriter zip zlib yaml zstd'.split(
    ' ',
  );

let work: string;
let out: string;
let bareOut: string;
let bareServer: string;
let mirror: string;
beforeAll(async () => {
  work = tmpDir('rbp-php-cli-');
  mirror = makeMirror();
  if (!SERVER) return;
  out = path.join(work, 'out');
  // php-ini: a php.ini at the root (memory_limit=77M, date.timezone=Pacific/Auckland) and bin/show-ini.php.
  const r = await rbp(['build', path.join(FIXTURES, 'php-ini'), '--out', out, '--type', 'phpserver'], {
    env: operatorEnv(mirror, { RBP_TOOL_FRANKENPHP: SERVER }),
  });
  expect(r.exitCode, r.all).toBe(0);
  expect(r.all).toContain(`php runs the PHP CLI of the server's build (${path.join(path.dirname(SERVER), 'php')})`);
  // The same server alone in a folder, as an upstream release binary comes: no PHP CLI beside it.
  bareServer = path.join(work, 'bare', 'frankenphp');
  fs.mkdirSync(path.dirname(bareServer));
  fs.symlinkSync(SERVER, bareServer);
  bareOut = path.join(work, 'bare-out');
  const b = await rbp(['build', path.join(FIXTURES, 'php-ini'), '--out', bareOut, '--type', 'phpserver'], {
    env: operatorEnv(mirror, { RBP_TOOL_FRANKENPHP: bareServer }),
  });
  expect(b.exitCode, b.all).toBe(0);
  expect(b.all).toContain(`php runs ${bareServer} php-cli with PHP's CLI options`);
}, 300_000);
afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(mirror, { recursive: true, force: true });
});

/** `command` as the app's CC_RUN_COMMAND: its output and exit status, as rbp run passes them on. */
async function run(command: string, built = out, server = SERVER!): Promise<{ code: number; out: string; err: string }> {
  const r = await rbp(['run', built, ...envArgs({ CC_RUN_COMMAND: command })], { env: { RBP_TOOL_PHP: '', RBP_TOOL_FRANKENPHP: server } });
  return { code: r.exitCode, out: r.stdout, err: r.stderr };
}

describe("php in hooks, tasks and CC_RUN_COMMAND is the PHP CLI of the server's build", () => {
  itWithServer("-v: the server's PHP, thread-safe, as the cli SAPI", async () => {
    const r = await run('php -v');
    expect(r.code, r.out).toBe(0);
    const version = /FrankenPHP v\S+ PHP (\S+)/.exec((await execa(SERVER!, ['version'])).stdout)?.[1];
    expect(r.out).toMatch(new RegExp(`^PHP ${version!.replaceAll('.', '\\.')} \\(cli\\) .*\\(ZTS\\)`, 'm'));
    expect(r.out).toContain('with Zend OPcache');
  });

  itWithServer('-m lists each extension of the contract that the build carries', async () => {
    const r = await run('php -m');
    expect(r.code, r.out).toBe(0);
    const listed = new Set(r.out.split('\n').map((l) => l.trim()));
    expect(
      MODULES.filter((m) => !listed.has(m)),
      r.out,
    ).toEqual([]);
    expect(listed.has('Zend OPcache')).toBe(true);
    // mbregex and password-argon2 are features of mbstring and standard.
    const f = await run(`php -r 'echo function_exists("mb_ereg") ? "mbregex " : "", defined("PASSWORD_ARGON2ID") ? "argon2" : "";'`);
    expect(f.out).toContain('mbregex argon2');
  });

  itWithServer("-i shows the configuration, with the project's php.ini (PHPRC)", async () => {
    const r = await run('php -i');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Thread Safety => enabled$/m);
    expect(r.out).toMatch(/^memory_limit => 77M => 77M$/m);
    expect(r.out).toMatch(/^Loaded Configuration File => .*\/php\.ini$/m);
  });

  itWithServer('-r, -d and -f; a script on stdin; the exit status comes back', async () => {
    expect((await run(`php -d memory_limit=5M -r 'echo "[", ini_get("memory_limit"), "/", 6*7, "]";'`)).out).toContain('[5M/42]');
    const f = await run('php -f bin/show-ini.php');
    expect(f.code).toBe(0);
    expect(f.out).toContain('memory_limit=77M');
    expect(f.out).toContain('date.timezone=Pacific/Auckland');
    expect((await run(`printf '<?php echo "[from stdin ", PHP_SAPI, "]";' | php`)).out).toContain('[from stdin cli]');
    expect((await run(`php -r 'exit(7);'`)).code).toBe(7);
    const fatal = await run(`php -r 'undefined_function();'`);
    expect(fatal.code).toBe(255);
  });

  itWithServer("PHP_BINARY names a php that works (what Composer's @php runs)", async () => {
    const r = await run(`php -r 'echo "binary ", PHP_BINARY, PHP_EOL; passthru(escapeshellarg(PHP_BINARY) . " -v", $s); echo "status ", $s, PHP_EOL;'`);
    expect(r.code, r.out).toBe(0);
    const binary = /^binary (.*)$/m.exec(r.out)?.[1];
    const version = /^PHP (\S+) \(cli\)/m.exec(r.out)?.[1];
    const status = /^status .*$/m.exec(r.out)?.[0];
    expect(binary && path.isAbsolute(binary), r.out).toBe(true);
    expect(version).toMatch(/^8\.4\.\d+$/);
    expect(status).toBe('status 0');
  });
});

describe("without a PHP CLI beside the server (as an upstream release binary): its php-cli with PHP's CLI options", () => {
  const bare = (command: string) => run(command, bareOut, bareServer);

  itWithServer("-v, -m and -i answer from the server's own PHP", async () => {
    const v = await bare('php -v');
    expect(v.code, v.err).toBe(0);
    expect(v.out).toMatch(/^PHP 8\.4\.\d+ \(cli\) \(ZTS\)$/m);
    const m = await bare('php -m');
    const listed = new Set(m.out.split('\n').map((l) => l.trim()));
    expect(
      MODULES.filter((x) => !listed.has(x)),
      m.out,
    ).toEqual([]);
    expect((await bare('php -i')).out).toMatch(/memory_limit => 77M/);
  });

  itWithServer('-r, -d, -f, stdin and exit codes; PHP_BINARY names bin/php; a CLI-only option is refused by name', async () => {
    expect((await bare(`php -d precision=5 -r 'echo "[", ini_get("precision"), "/", pi(), "]";'`)).out).toContain('[5/3.1416]');
    expect((await bare('php -f bin/show-ini.php')).out).toContain('date.timezone=Pacific/Auckland');
    expect((await bare('php bin/show-ini.php')).out).toContain('memory_limit=77M');
    expect((await bare(`printf '<?php echo "[stdin ", 6*7, "]";' | php`)).out).toContain('[stdin 42]');
    expect((await bare(`php -r 'exit(9);'`)).code).toBe(9);
    expect((await bare(`php -r 'echo "[", getenv("PHP_BINARY"), "]";'`)).out).toContain(
      `[${path.join(bareOut, 'layers', 'rbp_phpserver', 'php', 'bin', 'php')}]`,
    );
    const n = await bare('php -n -v');
    expect(n.code).toBe(1);
    expect(n.err).toContain('php: option -n needs a PHP CLI');
  });
});
