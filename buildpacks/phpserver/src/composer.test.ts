import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readComposerProject } from './composer-files.ts';
import { composerFlags } from './composer.ts';
import { renderedUserError as rendered } from '../../../test/helpers/user-error.ts';

describe('composerFlags', () => {
  it('uses the base flags plus --no-dev by default', () => {
    expect(composerFlags({}).flags).toEqual(['--no-interaction', '--no-progress', '--no-scripts', '--no-dev']);
  });
  it('lets CC_PHP_COMPOSER_FLAGS replace the base flags', () => {
    expect(composerFlags({ CC_PHP_COMPOSER_FLAGS: ' --no-interaction   --optimize-autoloader ' }).flags).toEqual([
      '--no-interaction',
      '--optimize-autoloader',
      '--no-dev',
    ]);
    expect(composerFlags({ CC_PHP_COMPOSER_FLAGS: '--no-dev --prefer-dist' }).flags).toEqual(['--no-dev', '--prefer-dist']);
  });
  it('drops --no-dev with CC_PHP_DEV_DEPENDENCIES=install, whatever the flags say', () => {
    expect(composerFlags({ CC_PHP_DEV_DEPENDENCIES: 'install' })).toMatchObject({ flags: ['--no-interaction', '--no-progress', '--no-scripts'], dev: true });
    expect(composerFlags({ CC_PHP_DEV_DEPENDENCIES: 'install', CC_PHP_COMPOSER_FLAGS: '--no-dev --no-interaction' }).flags).toEqual(['--no-interaction']);
    expect(composerFlags({ CC_PHP_DEV_DEPENDENCIES: 'ignore' }).flags).toContain('--no-dev');
  });
});

describe('readComposerProject', () => {
  const dir = (files: Record<string, string>) => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-php-composer-'));
    for (const [f, c] of Object.entries(files)) fs.writeFileSync(path.join(d, f), c);
    return d;
  };
  it('keys the cache on composer.lock, else composer.json', () => {
    expect(readComposerProject(dir({}))).toBeUndefined();
    expect(readComposerProject(dir({ 'composer.json': '{}' }))!.inputs.file).toBe('composer.json');
    const p = readComposerProject(dir({ 'composer.json': '{}', 'composer.lock': '{"packages":[]}' }))!;
    expect(p.inputs).toEqual({ file: 'composer.lock', sha256: crypto.createHash('sha256').update('{"packages":[]}').digest('hex') });
  });
  it('refuses a malformed composer.json', () => {
    const d = dir({ 'composer.json': '{"require": {"a/b": "^1",}}' });
    // The JSON.parse message depends on the Node version.
    expect(
      rendered(() => readComposerProject(d))
        .replaceAll(d, '<app>')
        .replace(/^! {3}.*$/m, '!   <JSON.parse message>'),
    ).toMatchInlineSnapshot(`
      "! ERROR composer.json is not valid JSON
      !
      ! Seen: composer.json (<app>/composer.json)
      ! Rule: composer.json is a JSON object
      !   <JSON.parse message>
      ! Fix:  correct composer.json (composer validate shows the problem), or remove it
      ! (error id: phpserver/composer-json/parse)"
    `);
    const e = dir({ 'composer.json': '{"require": ["a/b"]}' });
    expect(() => readComposerProject(e)).toThrow(/"require" is not an object/);
  });
});
