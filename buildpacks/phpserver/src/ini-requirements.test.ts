import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderUserError } from '../../../lib/errors.ts';
import { checkLineExtensions } from './extensions.ts';
import { iniExtensionRequirements, iniPairs } from './ini-requirements.ts';
import { SERVER_VERSIONS } from './server-version.ts';

const app = (ini?: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-ini-'));
  if (ini !== undefined) fs.writeFileSync(path.join(dir, 'php.ini'), ini);
  return dir;
};

describe('extensions php.ini needs', () => {
  it('reads ini pairs as PHP does: comments, sections and quotes aside', () => {
    expect(iniPairs('; c\n[PHP]\nsession.save_handler = "redis" ; inline\nmemory_limit=77M\n')).toEqual([
      ['session.save_handler', 'redis'],
      ['memory_limit', '77M'],
    ]);
  });

  it('a session handler in Redis or memcached needs its extension; extension= lines too', () => {
    expect(iniExtensionRequirements(app('session.save_handler = redis\nsession.save_path = "tcp://${REDIS_HOST}:6379"\n'))).toEqual([
      { name: 'redis', by: 'php.ini session.save_handler = redis' },
    ]);
    expect(iniExtensionRequirements(app('session.save_handler = memcached\nextension=php_igbinary.so\n')).map((r) => r.name)).toEqual([
      'memcached',
      'igbinary',
    ]);
    expect(iniExtensionRequirements(app('session.save_handler = files\n'))).toEqual([]);
    expect(iniExtensionRequirements(app())).toEqual([]);
  });

  it('an extension php.ini needs and the server lacks fails the build, naming php.ini', () => {
    const reqs = iniExtensionRequirements(app('session.save_handler = memcache\n'));
    let rendered = '';
    try {
      checkLineExtensions(reqs, SERVER_VERSIONS['8.5']);
    } catch (e) {
      rendered = renderUserError((e as { data: Parameters<typeof renderUserError>[0] }).data);
    }
    expect(rendered).toContain('! Seen: ext-* requirements: "ext-memcache" (php.ini)');
    expect(rendered).toContain('ext-memcache required by php.ini session.save_handler = memcache');
  });
});
