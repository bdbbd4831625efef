/**
 * The `php` command (contract: "The `php` command in hooks and scripts runs the server's `php-cli`
 * sub-command"). A layer on the build and launch PATH holds `bin/php`, a shell script that runs
 * `<server> php-cli "$@"`, or the operator's PHP when RBP_TOOL_PHP names one (CI uses Debian's).
 * Both variables are read when the script runs, so the operator may point them elsewhere at launch.
 * When the operator provides the server, `bin/frankenphp` runs it, so CC_RUN_COMMAND can say
 * `frankenphp …` either way. php.ini at the project root is PHP's configuration (PHPRC).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Layers } from '../../../lib/cnb/layers.ts';
import { LayerEnv } from '../../../lib/cnb/env.ts';
import { findOperatorTool } from '../../../lib/deps/index.ts';
import type { Logger } from '../../../lib/log.ts';
import type { InstalledServer } from './server-install.ts';

export const PHP_LAYER = 'php';

/** Escapes a value for a double-quoted shell word (where `${VAR:-default}` is expanded). */
function dq(s: string): string {
  return s.replace(/[\\"$`]/g, (c) => `\\${c}`);
}

export function phpShim(serverPath: string): string {
  return [
    '#!/bin/sh',
    '# php for build scripts, hooks and tasks (rbp/phpserver): the application server\'s php-cli sub-command,',
    '# or the operator\'s PHP when RBP_TOOL_PHP names one.',
    'if [ -n "${RBP_TOOL_PHP:-}" ]; then exec "$RBP_TOOL_PHP" "$@"; fi',
    `exec "\${RBP_TOOL_FRANKENPHP:-${dq(serverPath)}}" php-cli "$@"`,
    '',
  ].join('\n');
}

export function serverShim(serverPath: string): string {
  return ['#!/bin/sh', '# The application server the operator provides (RBP_TOOL_FRANKENPHP), as `frankenphp`.', `exec "\${RBP_TOOL_FRANKENPHP:-${dq(serverPath)}}" "$@"`, ''].join('\n');
}

export interface PhpCommand {
  /** `<layer>/bin/php`. */
  php: string;
  binDir: string;
  /** The PHP version that runs build scripts and Composer. */
  version: string;
  /** `server php-cli` or `RBP_TOOL_PHP=<path>`, for the log. */
  origin: string;
  /** PHPRC when the project has php.ini. */
  phprc: string | undefined;
}

export async function installPhpCommand(o: {
  layers: Layers;
  server: InstalledServer;
  appDir: string;
  env: Record<string, string | undefined>;
  log: Logger;
}): Promise<PhpCommand> {
  const operator = await findOperatorTool({
    id: 'php',
    env: o.env,
    log: o.log,
    versionArgs: ['-r', 'echo PHP_VERSION, PHP_EOL;'],
    expected: o.server.php,
    sbom: { layersDir: o.layers.dir, target: 'launch' },
  });
  const phpIni = path.join(o.appDir, 'php.ini');
  const phprc = fs.statSync(phpIni, { throwIfNoEntry: false })?.isFile() ? o.appDir : undefined;
  // Rewritten at every build: it is two lines and names the server of this build.
  const layer = o.layers.fresh(PHP_LAYER, { build: true, launch: true }, { server: o.server.path, phpIni: Boolean(phprc) });
  const binDir = path.join(layer.path, 'bin');
  fs.mkdirSync(binDir, { recursive: true });
  fs.writeFileSync(path.join(binDir, 'php'), phpShim(o.server.path), { mode: 0o755 });
  if (o.server.source === 'operator') fs.writeFileSync(path.join(binDir, 'frankenphp'), serverShim(o.server.path), { mode: 0o755 });
  const env = new LayerEnv();
  if (phprc) env.default('PHPRC', phprc);
  layer.writeEnv(env);
  const origin = operator ? `RBP_TOOL_PHP=${operator.path}` : `${o.server.path} php-cli`;
  o.log.info(`php runs ${origin}${phprc ? '; php.ini at the project root is loaded (PHPRC)' : ''}`);
  return { php: path.join(binDir, 'php'), binDir, version: operator?.version ?? o.server.php, origin, phprc };
}
