/**
 * PHP extensions (contract, "Included PHP extensions"). The `ext-*` requirements of composer.json and
 * composer.lock are checked at build, so an app that needs an extension the server lacks fails here
 * with its name rather than at its first request: first against the contract's rule for
 * CC_PHP_VERSION=8.5 (no memcache, no pdo_sqlsrv), before anything is installed; then against the
 * list the installed server itself reports (server-extensions.ts), never a table of ours.
 */
import { UserError } from '../../../lib/errors.ts';
import type { ComposerJson, ComposerLock } from './composer-files.ts';
import { SERVER_VERSIONS, type ServerVersion } from './server-version.ts';

/** The contract's list, exact names. */
export const INCLUDED_EXTENSIONS = [
  'amqp',
  'apcu',
  'ast',
  'bcmath',
  'brotli',
  'bz2',
  'calendar',
  'ctype',
  'curl',
  'dba',
  'dom',
  'exif',
  'fileinfo',
  'filter',
  'ftp',
  'gd',
  'gmp',
  'gettext',
  'iconv',
  'igbinary',
  'imagick',
  'intl',
  'ldap',
  'lz4',
  'mbregex',
  'mbstring',
  'memcache',
  'memcached',
  'mysqli',
  'mysqlnd',
  'opcache',
  'openssl',
  'password-argon2',
  'parallel',
  'pcntl',
  'pdo',
  'pdo_mysql',
  'pdo_pgsql',
  'pdo_sqlite',
  'pdo_sqlsrv',
  'pgsql',
  'phar',
  'posix',
  'protobuf',
  'readline',
  'redis',
  'session',
  'shmop',
  'simplexml',
  'soap',
  'sockets',
  'sodium',
  'sqlite3',
  'ssh2',
  'sysvmsg',
  'sysvsem',
  'sysvshm',
  'tidy',
  'tokenizer',
  'xlswriter',
  'xml',
  'xmlreader',
  'xmlwriter',
  'xz',
  'zip',
  'zlib',
  'yaml',
  'zstd',
] as const;

export const MISSING_BY_VERSION: Record<ServerVersion['selector'], readonly string[]> = {
  default: [],
  '8.5': ['memcache', 'pdo_sqlsrv'],
};

/** Composer's platform names for extensions whose PHP name differs. */
const ALIASES: Record<string, string> = { 'zend-opcache': 'opcache', 'zend opcache': 'opcache' };

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

/** What the build checks requirements against: the server's own list, and how to name that server. */
export interface ServerExtensionSet {
  names: ReadonlySet<string>;
  /** `PHP 8.4.11 (application server 1.11.1)`. */
  label: string;
}

/**
 * `phpserver/extensions/unavailable` for the requirements `missing` (not empty) of a server named
 * `label`: `fix` is given the extensions' names, `more` is said after each requirement.
 */
function unavailable(missing: ExtensionRequirement[], label: string, rule: string, fix: (names: string[]) => string, more: string[] = []): UserError {
  const names = [...new Set(missing.map((r) => r.name))];
  return new UserError({
    id: 'phpserver/extensions/unavailable',
    title: `PHP extension${names.length > 1 ? 's' : ''} ${names.join(', ')} ${names.length > 1 ? 'are' : 'is'} not available in ${label}`,
    seen: { what: 'ext-* requirements', value: names.map((n) => `ext-${n}`).join(', '), where: requirementSources(missing) },
    rule,
    fix: fix(names),
    details: [...missing.map((r) => `ext-${r.name} required by ${r.by}`), ...more],
  });
}

/** Throws `phpserver/extensions/unavailable` for a requirement the contract rules out with CC_PHP_VERSION=8.5. */
export function checkLineExtensions(reqs: ExtensionRequirement[], version: ServerVersion): void {
  const dropped = new Set(MISSING_BY_VERSION[version.selector]);
  const missing = reqs.filter((r) => dropped.has(r.name));
  if (missing.length === 0) return;
  throw unavailable(
    missing,
    `PHP ${version.php} (application server ${version.server}, CC_PHP_VERSION=8.5)`,
    'with CC_PHP_VERSION=8.5, memcache and pdo_sqlsrv are not included',
    (names) => `unset CC_PHP_VERSION to use PHP ${SERVER_VERSIONS.default.php}, which includes ${names.join(', ')}, or drop the requirement`,
  );
}

/** Where the requirements in `reqs` come from, for `seen.where`: the Composer files, php.ini, or both. */
function requirementSources(reqs: ExtensionRequirement[]): string {
  const ini = reqs.filter((r) => r.by.startsWith('php.ini')).length;
  return ini === reqs.length ? 'php.ini' : ini > 0 ? 'composer.json / composer.lock, php.ini' : 'composer.json / composer.lock';
}

/** Throws `phpserver/extensions/unavailable` naming every required extension the server lacks. */
export function checkExtensions(reqs: ExtensionRequirement[], server: ServerExtensionSet): void {
  const missing = reqs.filter((r) => !server.names.has(r.name));
  if (missing.length === 0) return;
  const fix = (names: string[]) => {
    const contract = names.filter((n) => (INCLUDED_EXTENSIONS as readonly string[]).includes(n));
    const [are, them] = contract.length > 1 ? ['are', 'them'] : ['is', 'it'];
    return contract.length > 0
      ? `${contract.join(', ')} ${are} in the contract's list but not in this server: its build had no source for ${them} (buildpacks/phpserver/README.md lists them); drop the requirement, or the operator provides a server that has ${them} (RBP_TOOL_FRANKENPHP)`
      : `remove the requirement on ${names.map((n) => `ext-${n}`).join(', ')} (and the packages that need it), or use an extension the server has`;
  };
  const rule = "an app's ext-* requirements must be extensions the application server loads (its own list, asked at build)";
  throw unavailable(missing, server.label, rule, fix, [`the server has: ${[...server.names].sort().join(', ')}`]);
}
