/**
 * PHP extensions (contract, "Included PHP extensions"): the server's PHP has a fixed list; with
 * CC_PHP_VERSION=8.5, `memcache` and `pdo_sqlsrv` are missing. The `ext-*` requirements of
 * composer.json and composer.lock are checked against it at build, so an app that needs an extension
 * the server lacks fails here with its name rather than at its first request.
 */
import { UserError } from '../../../lib/errors.ts';
import type { ComposerJson, ComposerLock } from './composer-files.ts';
import { SERVER_VERSIONS, type ServerVersion } from './server-version.ts';

/** The contract's list, exact names. */
export const INCLUDED_EXTENSIONS = [
  'amqp', 'apcu', 'ast', 'bcmath', 'brotli', 'bz2', 'calendar', 'ctype', 'curl', 'dba', 'dom', 'exif', 'fileinfo',
  'filter', 'ftp', 'gd', 'gmp', 'gettext', 'iconv', 'igbinary', 'imagick', 'intl', 'ldap', 'lz4', 'mbregex',
  'mbstring', 'memcache', 'memcached', 'mysqli', 'mysqlnd', 'opcache', 'openssl', 'password-argon2', 'parallel',
  'pcntl', 'pdo', 'pdo_mysql', 'pdo_pgsql', 'pdo_sqlite', 'pdo_sqlsrv', 'pgsql', 'phar', 'posix', 'protobuf',
  'readline', 'redis', 'session', 'shmop', 'simplexml', 'soap', 'sockets', 'sodium', 'sqlite3', 'ssh2', 'sysvmsg',
  'sysvsem', 'sysvshm', 'tidy', 'tokenizer', 'xlswriter', 'xml', 'xmlreader', 'xmlwriter', 'xz', 'zip', 'zlib',
  'yaml', 'zstd',
] as const;

export const MISSING_BY_VERSION: Record<ServerVersion['selector'], readonly string[]> = {
  default: [],
  '8.5': ['memcache', 'pdo_sqlsrv'],
};

/**
 * Extensions compiled into every PHP 8 build, which the contract's list leaves out because they
 * cannot be left out of PHP (`ext-json` is a common requirement).
 */
export const ALWAYS_PRESENT = ['core', 'date', 'hash', 'json', 'libxml', 'pcre', 'random', 'reflection', 'spl', 'standard'];

/** Composer's platform names for extensions whose PHP name differs. */
const ALIASES: Record<string, string> = { 'zend-opcache': 'opcache', 'zend opcache': 'opcache' };

export function availableExtensions(version: ServerVersion): Set<string> {
  const missing = new Set(MISSING_BY_VERSION[version.selector]);
  return new Set([...INCLUDED_EXTENSIONS.filter((e) => !missing.has(e)), ...ALWAYS_PRESENT]);
}

export interface ExtensionRequirement {
  /** The extension's name as PHP knows it (`pdo_mysql`). */
  name: string;
  /** Who asks for it: `composer.json require`, `composer.lock package acme/cache`. */
  by: string;
}

/** `ext-*` keys of a requirements object; composer.lock writes an empty one as `[]`. */
function extNames(reqs: unknown): string[] {
  if (!reqs || typeof reqs !== 'object' || Array.isArray(reqs)) return [];
  return Object.keys(reqs)
    .filter((k) => k.toLowerCase().startsWith('ext-'))
    .map((k) => {
      const n = k.slice(4).toLowerCase();
      return ALIASES[n] ?? n;
    });
}

/** Every ext-* requirement of the root package and of the locked packages Composer will install. */
export function extensionRequirements(json: ComposerJson, lock: ComposerLock | undefined, dev: boolean): ExtensionRequirement[] {
  const out: ExtensionRequirement[] = [];
  const add = (reqs: unknown, by: string) => {
    for (const name of extNames(reqs)) out.push({ name, by });
  };
  add(json.require, 'composer.json "require"');
  if (dev) add(json['require-dev'], 'composer.json "require-dev"');
  if (lock) {
    add(lock.platform, 'composer.lock "platform"');
    if (dev) add(lock['platform-dev'], 'composer.lock "platform-dev"');
    for (const p of lock.packages ?? []) add(p.require, `package ${p.name} (composer.lock)`);
    if (dev) for (const p of lock['packages-dev'] ?? []) add(p.require, `package ${p.name} (composer.lock, dev)`);
  }
  return out;
}

/** Throws `phpserver/extensions/unavailable` naming every required extension the server lacks. */
export function checkExtensions(reqs: ExtensionRequirement[], version: ServerVersion): void {
  const available = availableExtensions(version);
  const missing = reqs.filter((r) => !available.has(r.name));
  if (missing.length === 0) return;
  const names = [...new Set(missing.map((r) => r.name))];
  const dropped = names.filter((n) => MISSING_BY_VERSION[version.selector].includes(n));
  const serverLabel = `PHP ${version.php} (application server ${version.server}${version.selector === '8.5' ? ', CC_PHP_VERSION=8.5' : ''})`;
  throw new UserError({
    id: 'phpserver/extensions/unavailable',
    title: `PHP extension${names.length > 1 ? 's' : ''} ${names.join(', ')} ${names.length > 1 ? 'are' : 'is'} not available in ${serverLabel}`,
    seen: { what: 'ext-* requirements', value: names.map((n) => `ext-${n}`).join(', '), where: missing.every((r) => r.by.startsWith('php.ini')) ? 'php.ini' : missing.some((r) => r.by.startsWith('php.ini')) ? 'composer.json / composer.lock, php.ini' : 'composer.json / composer.lock' },
    rule: `the server's PHP has a fixed set of extensions${version.selector === '8.5' ? '; with CC_PHP_VERSION=8.5, memcache and pdo_sqlsrv are not included' : ''}`,
    fix:
      dropped.length > 0 && version.selector === '8.5'
        ? `unset CC_PHP_VERSION to use PHP ${SERVER_VERSIONS.default.php}, which includes ${dropped.join(', ')}, or drop the requirement`
        : `remove the requirement on ${names.map((n) => `ext-${n}`).join(', ')} (and the packages that need it), or use an extension of the list`,
    details: [...missing.map((r) => `ext-${r.name} required by ${r.by}`), `available: ${[...available].filter((e) => !ALWAYS_PRESENT.includes(e)).join(', ')}`],
  });
}
