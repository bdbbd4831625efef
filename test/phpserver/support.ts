/**
 * Shared set-up of the phpserver integration tests. The application server cannot be fetched on this
 * machine, so builds install it from a local mirror (RBP_DEPENDENCY_MIRROR) holding a fixture
 * artifact and its `.sha256`: it exercises the download and checksum code and is never run. PHP and
 * Composer are the real Debian ones (RBP_TOOL_PHP, RBP_TOOL_COMPOSER), as in CI.
 * The real server (RBP_TOOL_FRANKENPHP, built by scripts/tools/frankenphp.sh; CI exports it) serves
 * the HTTP checks: `itWithServer` runs them, fails them in CI when the variable is missing, and
 * skips them locally with the reason printed.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ociArch } from '../../lib/cnb/descriptor.ts';
import { it, type TestFunction } from 'vitest';
import { envArgs, tmpDir } from '../helpers/rbp.ts';
import { requirement } from '../helpers/requirement.ts';
import { execaSync } from 'execa';
import { finished } from '../../lib/child-result.ts';

/** The real application server, when the operator environment names one. */
export const SERVER = process.env.RBP_TOOL_FRANKENPHP?.trim() || undefined;
const MISSING = 'RBP_TOOL_FRANKENPHP is not set: it names the real application server (FrankenPHP), built by scripts/tools/frankenphp.sh';

/**
 * `it` for a test that needs the real server. Without RBP_TOOL_FRANKENPHP the test fails in CI
 * (CI exports it: a missing server is a broken CI, not a reason to skip) and is skipped locally with
 * the reason printed.
 */
export function itWithServer(name: string, fn: TestFunction, timeout = 120_000): void {
  const server = requirement(SERVER, { what: 'RBP_TOOL_FRANKENPHP', how: `${MISSING}; eval "$(scripts/tools/env.sh)"`, who: `phpserver "${name}"` });
  // In CI without the server, the test runs and fails saying what is missing.
  it.skipIf(server.skip)(name, SERVER ? fn : () => void server.value(), timeout);
}

let loaded: Set<string> | undefined;

/** The extensions the real server's PHP loads (`php-cli`), asked once. */
export function serverExtensions(): Set<string> {
  if (!loaded) {
    const r = finished(execaSync(SERVER!, ['php-cli', '-r', 'echo implode(",", get_loaded_extensions());'], { reject: false }));
    loaded = new Set((r.stdout ?? '').toLowerCase().split(',').filter(Boolean));
  }
  return loaded;
}

/**
 * `it` for a test that needs PHP extensions in the real server (a session handler): without the
 * server, as itWithServer; with a server whose PHP lacks one, skipped, saying which (the extensions
 * come with the server's build, scripts/tools/frankenphp.sh).
 */
export function itWithPhpExtensions(names: string[], name: string, fn: TestFunction, timeout = 120_000): void {
  if (!SERVER) {
    itWithServer(name, fn, timeout);
    return;
  }
  const lacking = names.filter((n) => !serverExtensions().has(n.toLowerCase()));
  if (lacking.length) console.warn(`phpserver: skipped "${name}": the server's PHP (${SERVER}) has no ${lacking.join(', ')} extension`);
  it.skipIf(lacking.length > 0)(name, fn, timeout);
}

export const SERVER_VERSIONS = ['1.9.1', '1.12.3'];

/** The upstream asset name buildpack.toml uses on this machine's arch. */
export function serverAsset(): string {
  return ociArch() === 'arm64' ? 'frankenphp-linux-aarch64' : 'frankenphp-linux-x86_64';
}

/** Bytes that are not a program: executing them fails (ENOEXEC), so nothing can pass for a server. */
export function fixtureArtifact(version: string): Buffer {
  return Buffer.from(`rbp test fixture standing for the frankenphp ${version} release asset; not a program\n`);
}

/** A mirror directory laid out as <id>/<version>/<file> with <file>.sha256 beside each file. */
export function makeMirror(versions: string[] = SERVER_VERSIONS): string {
  const dir = tmpDir('rbp-php-mirror-');
  for (const v of versions) {
    const d = path.join(dir, 'frankenphp', v);
    fs.mkdirSync(d, { recursive: true });
    const data = fixtureArtifact(v);
    fs.writeFileSync(path.join(d, serverAsset()), data);
    fs.writeFileSync(path.join(d, `${serverAsset()}.sha256`), `${crypto.createHash('sha256').update(data).digest('hex')}  ${serverAsset()}\n`);
  }
  return dir;
}

/**
 * The PHP that runs Composer and tasks in builds without the real server (the mirror's artifact is no
 * program): Debian's. With the real server, builds use its own PHP CLI (bin/php beside it).
 */
export const SYSTEM_PHP = process.env.RBP_TEST_PHP ?? '/usr/bin/php';
/** The real server's PHP CLI (scripts/tools/frankenphp.sh installs it beside the server), else Debian's. */
export const PHP = SERVER && fs.existsSync(path.join(path.dirname(SERVER), 'php')) ? path.join(path.dirname(SERVER), 'php') : SYSTEM_PHP;
/** Debian's Composer (2.5.5), which runs on Debian's PHP 8.2 (and crashes on PHP 8.4). */
export const SYSTEM_COMPOSER = process.env.RBP_TEST_COMPOSER ?? '/usr/bin/composer';
/** Composer 2.8 (scripts/tools/composer.sh, RBP_TOOL_COMPOSER), else Debian's. */
export const COMPOSER = process.env.RBP_TOOL_COMPOSER?.trim() || SYSTEM_COMPOSER;

export function haveFile(f: string): boolean {
  return fs.existsSync(f);
}

/**
 * The operator environment for `rbp build`: the mirror and Composer. The server comes from the mirror
 * (RBP_TOOL_FRANKENPHP emptied), with Debian's PHP for Composer and tasks, unless `extra` names a real
 * server: then `php` is that server's own CLI (RBP_TOOL_PHP emptied), as an operator's build has it.
 */
export function operatorEnv(mirror: string, extra: Record<string, string> = {}): Record<string, string> {
  const real = Boolean(extra.RBP_TOOL_FRANKENPHP);
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/root',
    RBP_DEPENDENCY_MIRROR: mirror,
    RBP_TOOL_PHP: real ? '' : SYSTEM_PHP,
    RBP_TOOL_COMPOSER: COMPOSER,
    RBP_TOOL_FRANKENPHP: '',
    ...extra,
  };
}

export { envArgs };
