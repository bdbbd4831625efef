import { describe, expect, it } from 'vitest';
import { renderedUserError as rendered } from '../../../test/helpers/user-error.ts';
import { checkExtensions, checkLineExtensions, extensionRequirements, INCLUDED_EXTENSIONS } from './extensions.ts';
import { SERVER_VERSIONS } from './server-version.ts';

/** Copied verbatim from the contract ("Included PHP extensions (exact names)"). */
const CONTRACT_LIST =
  'amqp, apcu, ast, bcmath, brotli, bz2, calendar, ctype, curl, dba, dom, exif, fileinfo, filter, ftp, gd, gmp, gettext, iconv, igbinary, imagick, intl, ldap, lz4, mbregex, mbstring, memcache, memcached, mysqli, mysqlnd, opcache, openssl, password-argon2, parallel, pcntl, pdo, pdo_mysql, pdo_pgsql, pdo_sqlite, pdo_sqlsrv, pgsql, phar, posix, protobuf, readline, redis, session, shmop, simplexml, soap, sockets, sodium, sqlite3, ssh2, sysvmsg, sysvsem, sysvshm, tidy, tokenizer, xlswriter, xml, xmlreader, xmlwriter, xz, zip, zlib, yaml, zstd'.split(
    ', ',
  );

describe('extension names, verbatim from the contract', () => {
  it('INCLUDED_EXTENSIONS is the contract list, name for name and in order', () => {
    expect([...INCLUDED_EXTENSIONS]).toEqual(CONTRACT_LIST);
    expect(INCLUDED_EXTENSIONS).toHaveLength(68);
  });
  it('with CC_PHP_VERSION=8.5 exactly memcache and pdo_sqlsrv are ruled out, before any server is asked', () => {
    const all = CONTRACT_LIST.map((name) => ({ name, by: 'composer.json "require"' }));
    expect(() => checkLineExtensions(all, SERVER_VERSIONS.default)).not.toThrow();
    expect(() =>
      checkLineExtensions(
        all.filter((r) => r.name !== 'memcache' && r.name !== 'pdo_sqlsrv'),
        SERVER_VERSIONS['8.5'],
      ),
    ).not.toThrow();
    expect(
      rendered(() =>
        checkLineExtensions(
          [
            { name: 'memcache', by: 'composer.json "require"' },
            { name: 'intl', by: 'y' },
          ],
          SERVER_VERSIONS['8.5'],
        ),
      ),
    ).toMatchInlineSnapshot(`
      "! ERROR PHP extension memcache is not available in PHP 8.5 (application server 1.12.3, CC_PHP_VERSION=8.5)
      !
      ! Seen: ext-* requirements: "ext-memcache" (composer.json / composer.lock)
      ! Rule: with CC_PHP_VERSION=8.5, memcache and pdo_sqlsrv are not included
      !   ext-memcache required by composer.json "require"
      ! Fix:  unset CC_PHP_VERSION to use PHP 8.4.12, which includes memcache, or drop the requirement
      ! (error id: phpserver/extensions/unavailable)"
    `);
  });
});

describe('extensions', () => {
  it('reads ext-* requirements from composer.json and composer.lock, dev ones only when installed', () => {
    const json = { require: { php: '>=8.1', 'ext-Intl': '*', 'ext-zend-opcache': '*' }, 'require-dev': { 'ext-xdebug': '*' } };
    const lock = {
      platform: [],
      'platform-dev': { 'ext-pcov': '*' },
      packages: [{ name: 'acme/cache', require: { 'ext-redis': '*' } }],
      'packages-dev': [{ name: 'acme/dev', require: { 'ext-ast': '*' } }],
    };
    expect(extensionRequirements(json, lock as never, false)).toEqual([
      { name: 'intl', by: 'composer.json "require"' },
      { name: 'opcache', by: 'composer.json "require"' },
      { name: 'redis', by: 'package acme/cache (composer.lock)' },
    ]);
    expect(extensionRequirements(json, lock as never, true).map((r) => r.name)).toEqual(['intl', 'opcache', 'xdebug', 'pcov', 'redis', 'ast']);
  });

  const server = { names: new Set(['core', 'json', 'intl', 'redis', 'opcache']), label: 'PHP 8.4.11 (application server 1.11.1)' };
  it('accepts what the server reports, and names every extension it lacks, and who needs it', () => {
    expect(() =>
      checkExtensions(
        [
          { name: 'redis', by: 'x' },
          { name: 'json', by: 'y' },
        ],
        server,
      ),
    ).not.toThrow();
    expect(
      rendered(() =>
        checkExtensions(
          [
            { name: 'mongodb', by: 'package acme/db (composer.lock)' },
            { name: 'xdebug', by: 'composer.json "require"' },
          ],
          server,
        ),
      ),
    ).toMatchInlineSnapshot(`
      "! ERROR PHP extensions mongodb, xdebug are not available in PHP 8.4.11 (application server 1.11.1)
      !
      ! Seen: ext-* requirements: "ext-mongodb, ext-xdebug" (composer.json / composer.lock)
      ! Rule: an app's ext-* requirements must be extensions the application server loads (its own list, asked at build)
      !   ext-mongodb required by package acme/db (composer.lock)
      !   ext-xdebug required by composer.json "require"
      !   the server has: core, intl, json, opcache, redis
      ! Fix:  remove the requirement on ext-mongodb, ext-xdebug (and the packages that need it), or use an extension the server has
      ! (error id: phpserver/extensions/unavailable)"
    `);
  });
  it("says when a missing extension is one of the contract's (one this server's build had no source for)", () => {
    expect(rendered(() => checkExtensions([{ name: 'xz', by: 'composer.json "require"' }], server))).toMatchInlineSnapshot(`
      "! ERROR PHP extension xz is not available in PHP 8.4.11 (application server 1.11.1)
      !
      ! Seen: ext-* requirements: "ext-xz" (composer.json / composer.lock)
      ! Rule: an app's ext-* requirements must be extensions the application server loads (its own list, asked at build)
      !   ext-xz required by composer.json "require"
      !   the server has: core, intl, json, opcache, redis
      ! Fix:  xz is in the contract's list but not in this server: its build had no source for it (buildpacks/phpserver/README.md lists them); drop the requirement, or the operator provides a server that has it (RBP_TOOL_FRANKENPHP)
      ! (error id: phpserver/extensions/unavailable)"
    `);
  });
});
