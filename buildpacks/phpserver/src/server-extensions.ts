/**
 * The extensions the application server really loads: the server runs a small script through its
 * own `php-cli` sub-command (the embed SAPI that serves requests, with PHP's configuration), and
 * says which modules and Zend extensions it has. mbregex and password-argon2, which the contract lists
 * as extensions, are features of mbstring and standard: they count when they are there.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { finished } from '../../../lib/child-result.ts';

export interface ServerExtensions {
  /** PHP_VERSION as the server reports it. */
  php: string;
  /** Lower-case names, as Composer's `ext-*` requirements name them (`opcache` for Zend OPcache). */
  names: Set<string>;
}

const SCRIPT = `<?php
$names = array_map('strtolower', array_merge(get_loaded_extensions(), get_loaded_extensions(true)));
if (function_exists('mb_ereg')) $names[] = 'mbregex';
if (defined('PASSWORD_ARGON2ID')) $names[] = 'password-argon2';
echo json_encode(['php' => PHP_VERSION, 'names' => array_values(array_unique($names))]), "\\n";
`;

/** Names PHP gives that Composer writes otherwise. */
const RENAMED: Record<string, string> = { 'zend opcache': 'opcache' };

/**
 * Asks the server. Resolves with the reason when it cannot be asked (an executable for another
 * machine, a server that does not start): the caller decides what that means.
 */
export async function serverExtensions(server: string, env: Record<string, string>): Promise<ServerExtensions | { error: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-php-ext-'));
  try {
    const script = path.join(dir, 'extensions.php');
    fs.writeFileSync(script, SCRIPT);
    const r = finished(await execa(server, ['php-cli', script], { env, extendEnv: false, reject: false, timeout: 60_000, stdin: 'ignore', all: true }));
    const line = (r.stdout ?? '').split('\n').find((l) => l.startsWith('{'));
    if (r.exitCode !== 0 || !line)
      return {
        error: `${path.basename(server)} php-cli ${r.failed && r.exitCode === undefined ? `could not run: ${r.shortMessage}` : `exited ${r.exitCode ?? r.signal}: ${(r.all ?? '').trim().split('\n').slice(-2).join(' ') || 'no output'}`}`,
      };
    const parsed = JSON.parse(line) as { php: string; names: string[] };
    return { php: parsed.php, names: new Set(parsed.names.map((n) => RENAMED[n] ?? n)) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
