import { describe, expect, it } from 'vitest';
import { renderedUserError as rendered } from '../../../test/helpers/user-error.ts';
import { selectServer as selectServerOf } from './server-version.ts';
import { checkInstance } from './instance.ts';
import { parseServerVersion } from './server-install.ts';

const selectServer = (v: string | undefined) => selectServerOf(v === undefined ? {} : { CC_PHP_VERSION: v });

describe('selectServer', () => {
  it('defaults to 1.9.1 with PHP 8.4.12 and Caddy 2.10.2', () => {
    expect(selectServer(undefined)).toEqual({ selector: 'default', server: '1.9.1', php: '8.4.12', caddy: '2.10.2' });
    expect(selectServer('  ')).toMatchObject({ server: '1.9.1' });
  });
  it('accepts CC_PHP_VERSION=8.4, the default line', () => {
    expect(selectServer('8.4')).toEqual(selectServer(undefined));
    expect(selectServer(' 8.4 ')).toMatchObject({ selector: 'default', server: '1.9.1', php: '8.4.12' });
  });
  it('selects 1.12.3 with PHP 8.5 and Caddy 2.11.3 for CC_PHP_VERSION=8.5', () => {
    expect(selectServer('8.5')).toEqual({ selector: '8.5', server: '1.12.3', php: '8.5', caddy: '2.11.3' });
  });
  it('refuses any other value', () => {
    for (const v of ['8.3', '8', '8.4.0', '8.5.0', 'latest']) expect(() => selectServer(v)).toThrow(/Invalid CC_PHP_VERSION/);
    expect(rendered(() => selectServer('8.3'))).toMatchInlineSnapshot(`
      "! ERROR Invalid CC_PHP_VERSION
      !
      ! Seen: CC_PHP_VERSION: "8.3" (the application environment)
      ! Rule: CC_PHP_VERSION is one of 8.4, 8.5 (contract, phpserver versioning).
      ! Fix:  Unset CC_PHP_VERSION (or set it to 8.4) for PHP 8.4.12, or set it to 8.5.
      ! (error id: config/CC_PHP_VERSION/invalid)"
    `);
  });
});

describe('checkInstance', () => {
  it("refuses pico with the contract's reason and accepts the others", () => {
    for (const s of [undefined, 'nano', 'XS', 'M']) expect(() => checkInstance(s)).not.toThrow();
    expect(rendered(() => checkInstance('pico'))).toMatchInlineSnapshot(`
      "! ERROR The phpserver runtime cannot run on a pico instance
      !
      ! Seen: instance size: "pico" (RBP_INSTANCE_SIZE (rbp build --instance))
      ! Rule: phpserver cannot be deployed on a pico instance; the default instance size is XS
      ! Fix:  build and run on XS or a larger instance (rbp build --instance XS, rbp run --instance XS), or serve static files with the static runtime, which runs on pico
      ! (error id: phpserver/instance/pico)"
    `);
  });
});

describe('parseServerVersion', () => {
  it('reads the PHP and Caddy versions of `frankenphp version`', () => {
    expect(parseServerVersion('FrankenPHP v1.11.1 PHP 8.2.32 Caddy v2.10.2 h1:abc=')).toEqual({ php: '8.2.32', caddy: '2.10.2' });
    expect(parseServerVersion('FrankenPHP v1.9.1 PHP 8.4.12 Caddy v2.10.2')).toEqual({ php: '8.4.12', caddy: '2.10.2' });
    expect(parseServerVersion('something else')).toEqual({});
  });
});
