/**
 * `php` as an app's hooks, tasks, Composer and CC_RUN_COMMAND see it (issue "PHP as the contract
 * ships it", item 4): the PHP CLI of the application server's own build, found beside the real server
 * (RBP_TOOL_FRANKENPHP, no RBP_TOOL_PHP), behaving as PHP's CLI does: -v, -m, -i, -r, -d, -f, a
 * script on stdin, exit codes, PHP_BINARY a php that works, and PHP's configuration: the production
 * settings and the project's php.ini, the same values as the server's phpinfo() reports. Each command
 * runs as the app's CC_RUN_COMMAND through `rbp run`, in the launch environment.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { FIXTURES, rbp, serve, tmpDir } from '../helpers/rbp.ts';
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
/** Each directive's local value as the server's phpinfo() reports it (php-ini's info.php). */
let served: Map<string, string>;
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
  let html = '';
  const s = await serve(out, {}, async (port) => {
    const res = await fetch(`http://127.0.0.1:${port}/info.php`, { signal: AbortSignal.timeout(45_000) });
    html = await res.text();
    expect(res.status, html).toBe(200);
  });
  expect([0, 143], s.output).toContain(s.status);
  served = new Map(
    [...html.matchAll(/<tr><td class="e">([^<]+?)\s*<\/td><td class="v">(.*?)<\/td><td class="v">.*?<\/td><\/tr>/g)].map((m) => [m[1]!, text(m[2]!)]),
  );
}, 300_000);
afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(mirror, { recursive: true, force: true });
});

/** An HTML cell's text, as `php -i` writes it. */
const text = (html: string): string =>
  html
    .replace(/<[^>]+>/g, '')
    .replaceAll('&quot;', '"')
    .replaceAll('&#039;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&')
    .trim();

/** `name => local => master` lines of `php -i`: each directive's local value (the CLI too colours highlight.* in HTML). */
const cliDirectives = (out: string): Map<string, string> =>
  new Map([...out.matchAll(/^([\w.]+) => (.*?) => .*$/gm)].filter((m) => m[1] !== 'Directive').map((m) => [m[1]!, text(m[2]!)]));

/**
 * What PHP's command-line SAPIs (the CLI, the embed SAPI of php-cli) fix whatever php.ini says, as
 * `php -i` and the server report them: the only directives on which they differ.
 */
const FIXED_FOR_THE_CLI = {
  output_buffering: ['0', '4096'],
  implicit_flush: ['On', 'Off'],
  max_execution_time: ['0', '30'],
  max_input_time: ['-1', '60'],
  register_argc_argv: ['On', 'Off'],
  html_errors: ['Off', 'On'],
};

/** `php -i` against the server's phpinfo(): every directive both report, with the same value but for FIXED_FOR_THE_CLI. */
function expectSameConfiguration(info: string): void {
  const cli = cliDirectives(info);
  const both = [...cli.keys()].filter((k) => served.has(k));
  expect(both.length, info).toBeGreaterThan(200);
  const differ = Object.fromEntries(both.filter((k) => cli.get(k) !== served.get(k)).map((k) => [k, [cli.get(k), served.get(k)]]));
  expect(differ).toEqual(FIXED_FOR_THE_CLI);
}

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

  itWithServer("-i shows the configuration: PHP's production settings, the project's php.ini on top", async () => {
    const r = await run('php -i');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Thread Safety => enabled$/m);
    const layer = path.join(out, 'layers', 'rbp_phpserver', 'php');
    expect(r.out).toContain(`Loaded Configuration File => ${path.join(layer, 'etc', 'php.ini')}\n`);
    // The scanned files, comma-separated over lines: the build's own (opcache) first, the project's php.ini last.
    const scanned = /^Additional \.ini files parsed => ([^]*?)\n\n/m.exec(r.out)?.[1]?.split(/,\s*/);
    expect(scanned?.at(-1), r.out).toBe(path.join(layer, 'etc', 'app', 'php.ini'));
    // The project's values (memory_limit, error_reporting = E_ALL) over the production ones, which stay where it is silent.
    expect(r.out).toMatch(/^memory_limit => 77M => 77M$/m);
    expect((await run(`php -r 'echo error_reporting() === E_ALL ? "E_ALL" : error_reporting();'`)).out).toContain('E_ALL');
    for (const line of ['display_errors => Off', 'log_errors => On', 'short_open_tag => Off', 'session.gc_divisor => 1000', 'zend.assertions => -1'])
      expect(r.out).toContain(`\n${line} => `);
  });

  itWithServer("-i and the server's phpinfo() report the same value for every directive, but those PHP's CLI fixes", async () => {
    expect(served.get('output_buffering')).toBe('4096');
    expect(served.get('display_errors')).toBe('Off');
    expect(served.get('expose_php')).toBe('On');
    expect(served.get('memory_limit')).toBe('77M');
    const r = await run('php -i');
    expect(r.code).toBe(0);
    expectSameConfiguration(r.out);
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
    const i = await bare('php -i');
    expect(i.out).toMatch(/memory_limit => 77M/);
    expectSameConfiguration(i.out);
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
