import { describe, expect, it } from 'vitest';
import { rendered } from './errors.test-support.ts';
import { availableExtensions, checkExtensions, extensionRequirements, INCLUDED_EXTENSIONS } from './extensions.ts';
import { SERVER_VERSIONS } from './server-version.ts';

/** Copied verbatim from the contract ("Included PHP extensions (exact names)"). */
const CONTRACT_LIST =
  'amqp, apcu, ast, bcmath, brotli, bz2, calendar, ctype, curl, dba, dom, exif, fileinfo, filter, ftp, gd, gmp, gettext, iconv, igbinary, imagick, intl, ldap, lz4, mbregex, mbstring, memcache, memcached, mysqli, mysqlnd, opcache, openssl, password-argon2, parallel, pcntl, pdo, pdo_mysql, pdo_pgsql, pdo_sqlite, pdo_sqlsrv, pgsql, phar, posix, protobuf, readline, redis, session, shmop, simplexml, soap, sockets, sodium, sqlite3, ssh2, sysvmsg, sysvsem, sysvshm, tidy, tokenizer, xlswriter, xml, xmlreader, xmlwriter, xz, zip, zlib, yaml, zstd'.split(', ');

describe('extension names, verbatim from the contract', () => {
  it('INCLUDED_EXTENSIONS is the contract list, name for name and in order', () => {
    expect([...INCLUDED_EXTENSIONS]).toEqual(CONTRACT_LIST);
  });
  it('the default server has all of them; with CC_PHP_VERSION=8.5 exactly memcache and pdo_sqlsrv are gone', () => {
    const d = availableExtensions(SERVER_VERSIONS.default);
    const n = availableExtensions(SERVER_VERSIONS['8.5']);
    for (const e of CONTRACT_LIST) expect(d.has(e), e).toBe(true);
    expect(CONTRACT_LIST.filter((e) => n.has(e))).toEqual(CONTRACT_LIST.filter((e) => e !== 'memcache' && e !== 'pdo_sqlsrv'));
  });
});

describe('extensions', () => {
  it('holds the contract\'s list; 8.5 lacks memcache and pdo_sqlsrv', () => {
    expect(INCLUDED_EXTENSIONS).toHaveLength(68);
    const d = availableExtensions(SERVER_VERSIONS.default);
    const n = availableExtensions(SERVER_VERSIONS['8.5']);
    expect(d.has('memcache') && d.has('pdo_sqlsrv')).toBe(true);
    expect(n.has('memcache') || n.has('pdo_sqlsrv')).toBe(false);
    expect(n.has('redis') && n.has('json')).toBe(true);
  });

  it('reads ext-* requirements from composer.json and composer.lock, dev ones only when installed', () => {
    const json = { require: { php: '>=8.1', 'ext-Intl': '*', 'ext-zend-opcache': '*' }, 'require-dev': { 'ext-xdebug': '*' } };
    const lock = { platform: [], 'platform-dev': { 'ext-pcov': '*' }, packages: [{ name: 'acme/cache', require: { 'ext-redis': '*' } }], 'packages-dev': [{ name: 'acme/dev', require: { 'ext-ast': '*' } }] };
    expect(extensionRequirements(json, lock as never, false)).toEqual([
      { name: 'intl', by: 'composer.json "require"' },
      { name: 'opcache', by: 'composer.json "require"' },
      { name: 'redis', by: 'package acme/cache (composer.lock)' },
    ]);
    expect(extensionRequirements(json, lock as never, true).map((r) => r.name)).toEqual(['intl', 'opcache', 'xdebug', 'pcov', 'redis', 'ast']);
  });

  it('names every unavailable extension and who needs it', () => {
    expect(() => checkExtensions([{ name: 'memcache', by: 'x' }], SERVER_VERSIONS.default)).not.toThrow();
    const msg = rendered(() => checkExtensions([{ name: 'memcache', by: 'composer.json "require"' }, { name: 'intl', by: 'y' }], SERVER_VERSIONS['8.5']));
    expect(msg.split('\n').filter((l) => !l.includes('available:'))).toMatchInlineSnapshot(`
      [
        "! ERROR PHP extension memcache is not available in PHP 8.5 (application server 1.12.3, CC_PHP_VERSION=8.5)",
        "!",
        "! Seen: ext-* requirements: "ext-memcache" (composer.json / composer.lock)",
        "! Rule: the server's PHP has a fixed set of extensions; with CC_PHP_VERSION=8.5, memcache and pdo_sqlsrv are not included",
        "!   ext-memcache required by composer.json "require"",
        "! Fix:  unset CC_PHP_VERSION to use PHP 8.4.12, which includes memcache, or drop the requirement",
        "! (error id: phpserver/extensions/unavailable)",
      ]
    `);
    expect(rendered(() => checkExtensions([{ name: 'mongodb', by: 'package acme/db (composer.lock)' }, { name: 'xdebug', by: 'composer.json "require"' }], SERVER_VERSIONS.default)).split('\n').filter((l) => !l.includes('available:'))).toMatchInlineSnapshot(`
      [
        "! ERROR PHP extensions mongodb, xdebug are not available in PHP 8.4.12 (application server 1.9.1)",
        "!",
        "! Seen: ext-* requirements: "ext-mongodb, ext-xdebug" (composer.json / composer.lock)",
        "! Rule: the server's PHP has a fixed set of extensions",
        "!   ext-mongodb required by package acme/db (composer.lock)",
        "!   ext-xdebug required by composer.json "require"",
        "! Fix:  remove the requirement on ext-mongodb, ext-xdebug (and the packages that need it), or use an extension of the list",
        "! (error id: phpserver/extensions/unavailable)",
      ]
    `);
  });
});
