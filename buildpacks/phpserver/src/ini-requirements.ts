/**
 * The extensions php.ini needs. An app that keeps its sessions in Redis or
 * memcached says so in php.ini (`session.save_handler = redis`, the way Paketo's and Heroku's PHP
 * apps do), not in composer.json: that handler is an extension, required like an `ext-*` of
 * Composer, and so are the extensions php.ini loads itself (`extension=redis`). The build checks them
 * against the server's PHP with the Composer ones (extensions.ts), naming php.ini as the source.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ExtensionRequirement } from './extensions.ts';

/** session.save_handler values provided by an extension, and that extension. */
const SAVE_HANDLERS: Record<string, string> = { redis: 'redis', rediscluster: 'redis', memcached: 'memcached', memcache: 'memcache' };

/** `key = value` pairs of an ini text, comments and sections left out, quotes removed; later keys win as in PHP. */
export function iniPairs(text: string): [string, string][] {
  const out: [string, string][] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith(';') || line.startsWith('#') || line.startsWith('[')) continue;
    const m = /^([^=]+?)\s*=\s*(.*)$/.exec(line);
    if (!m) continue;
    let value = m[2]!.trim();
    const quoted = /^"([^"]*)"|^'([^']*)'/.exec(value);
    value = quoted ? (quoted[1] ?? quoted[2]!) : value.replace(/\s*;.*$/, '').trim();
    out.push([m[1]!.trim().toLowerCase(), value]);
  }
  return out;
}

/** `redis`, `redis.so`, `php_redis.so`, `/usr/lib/php/…/redis.so` → `redis`. */
function extensionName(value: string): string {
  return path
    .basename(value)
    .replace(/\.(so|dll)$/i, '')
    .replace(/^php_/i, '')
    .toLowerCase();
}

/** The extensions the project's php.ini needs: its session handler's, and those it loads. */
export function iniExtensionRequirements(appDir: string): ExtensionRequirement[] {
  let text: string;
  try {
    text = fs.readFileSync(path.join(appDir, 'php.ini'), 'utf8');
  } catch {
    return [];
  }
  const out: ExtensionRequirement[] = [];
  let handler: string | undefined;
  for (const [key, value] of iniPairs(text)) {
    if (key === 'session.save_handler') handler = value.toLowerCase();
    if ((key === 'extension' || key === 'zend_extension') && value) out.push({ name: extensionName(value), by: `php.ini ${key}=${value}` });
  }
  const ext = handler ? SAVE_HANDLERS[handler] : undefined;
  if (ext) out.unshift({ name: ext, by: `php.ini session.save_handler = ${handler}` });
  return out;
}
