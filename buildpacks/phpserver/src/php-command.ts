/**
 * The `php` command (contract: "The `php` command in hooks and scripts runs the server's `php-cli`
 * sub-command"). A layer on the build and launch PATH holds `bin/php`, which behaves like the PHP CLI
 * of the application server's own build (`-v`, `-m`, `-i`, `-r`, `-d`, `-f`, stdin, exit codes,
 * PHP_BINARY), in this order:
 * 1. RBP_TOOL_PHP, when the operator names a PHP;
 * 2. the PHP CLI the server's build ships beside it (`<dir of the server>/php`, as scripts/tools/
 *    frankenphp.sh installs it): the same PHP, the same extensions, built as the `cli` SAPI;
 * 3. else the server's own `php-cli` sub-command, which takes a script and nothing else, running a
 *    small PHP front (php-cli-front.ts, in the layer's share/) that gives it PHP's CLI options (-v, -m,
 *    -i, -r, -d, -f, stdin); PHP_BINARY then names this command, so Composer's `@php` finds it.
 * The variables are read when the script runs, so the operator may point them elsewhere at launch.
 * When the operator provides the server, `bin/frankenphp` runs it, so CC_RUN_COMMAND can say
 * `frankenphp …` either way. The layer also holds PHP's configuration, which the server reads too
 * (php-ini.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Layers } from '../../../lib/cnb/layers.ts';
import { LayerEnv, applyLayerEnv, prependPath } from '../../../lib/cnb/env.ts';
import { findOperatorTool, readToolVersion } from '../../../lib/deps/index.ts';
import { isExecutableFile } from '../../../lib/fsx.ts';
import type { Logger } from '../../../lib/log.ts';
import { PHP_CLI_FRONT } from './php-cli-front.ts';
import { PRODUCTION_SOURCE, writePhpIni } from './php-ini.ts';
import type { InstalledServer } from './server-install.ts';

export const PHP_LAYER = 'php';

/** Escapes a value for a double-quoted shell word (where `${VAR:-default}` is expanded). */
function dq(s: string): string {
  return s.replace(/[\\"$`]/g, (c) => `\\${c}`);
}

/** `bin/php`, in the order above; without `front`, the server's php-cli gets the arguments as they are. */
export function phpShim(serverPath: string, serverVariable = 'RBP_TOOL_FRANKENPHP', front?: string): string {
  return [
    '#!/bin/sh',
    "# php for build scripts, hooks, tasks and CC_RUN_COMMAND (rbp/phpserver): the operator's PHP",
    "# (RBP_TOOL_PHP), else the PHP CLI of the application server's build (php beside it), else the",
    "# server's php-cli sub-command, with PHP_BINARY naming this command for Composer's @php.",
    'if [ -n "${RBP_TOOL_PHP:-}" ]; then exec "$RBP_TOOL_PHP" "$@"; fi',
    `server="\${${serverVariable}:-${dq(serverPath)}}"`,
    'case $server in */*) cli="${server%/*}/php" ;; *) cli= ;; esac',
    'if [ -n "$cli" ] && [ -f "$cli" ] && [ -x "$cli" ]; then exec "$cli" "$@"; fi',
    'PHP_BINARY=$0; export PHP_BINARY',
    front ? `exec "$server" php-cli "${dq(front)}" "$@"` : 'exec "$server" php-cli "$@"',
    '',
  ].join('\n');
}

export function serverShim(serverPath: string, serverVariable = 'RBP_TOOL_FRANKENPHP'): string {
  return [
    '#!/bin/sh',
    `# The application server the operator provides (${serverVariable}), as \`frankenphp\`.`,
    `exec "\${${serverVariable}:-${dq(serverPath)}}" "$@"`,
    '',
  ].join('\n');
}

export interface PhpCommand {
  /** `<layer>/bin/php`. */
  php: string;
  binDir: string;
  /** The PHP version that runs build scripts and Composer. */
  version: string;
  /** What `php` runs, for the log. */
  origin: string;
  /** The build environment as the layer leaves it for later steps (PATH, PHPRC, PHP_INI_SCAN_DIR): what our own steps run with. */
  env: Record<string, string>;
}

/**
 * The PHP CLI of the server's own build: `php` beside the server, when it runs and reports the
 * server's PHP version. Undefined otherwise (an upstream release binary has none).
 */
export async function serverCli(server: InstalledServer): Promise<string | undefined> {
  const cli = path.join(path.dirname(server.path), 'php');
  if (cli === server.path || !isExecutableFile(cli)) return undefined;
  const { version } = await readToolVersion(cli, ['-n', '-r', 'echo PHP_VERSION, PHP_EOL;']);
  return version === server.php ? cli : undefined;
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
  const cli = operator ? undefined : await serverCli(o.server);
  // Rewritten at every build: it is a few lines and names the server of this build.
  const layer = o.layers.fresh(PHP_LAYER, { build: true, launch: true }, { server: o.server.path });
  const binDir = path.join(layer.path, 'bin');
  fs.mkdirSync(binDir, { recursive: true });
  const front = path.join(layer.path, 'share', 'php-cli.php');
  fs.mkdirSync(path.dirname(front), { recursive: true });
  fs.writeFileSync(front, PHP_CLI_FRONT);
  fs.writeFileSync(path.join(binDir, 'php'), phpShim(o.server.path, o.server.variable, front), { mode: 0o755 });
  if (o.server.source === 'operator') fs.writeFileSync(path.join(binDir, 'frankenphp'), serverShim(o.server.path, o.server.variable), { mode: 0o755 });
  const layerEnv = new LayerEnv();
  const appIni = writePhpIni(layer.path, o.appDir, layerEnv);
  layer.writeEnv(layerEnv);
  // Our own steps see the layer as later buildpacks do: a build layer's env only reaches those.
  const env = Object.fromEntries(Object.entries(o.env).filter((e): e is [string, string] => e[1] !== undefined));
  prependPath(env, 'PATH', binDir);
  applyLayerEnv(env, layer.path, 'build');
  const origin = operator
    ? `RBP_TOOL_PHP=${operator.path}`
    : cli
      ? `the PHP CLI of the server's build (${cli})`
      : `${o.server.path} php-cli with PHP's CLI options`;
  o.log.info(`php runs ${origin}`);
  o.log.info(`php.ini: PHP's production settings (${PRODUCTION_SOURCE})${appIni ? ", the project's php.ini on top" : ''}, for the server and php alike`);
  if (!operator && !cli)
    o.log.warn(
      "the application server has no PHP CLI beside it: php runs its php-cli sub-command with PHP's CLI options (-v, -m, -i, -r, -d, -f, stdin) on top; -n, -c, -S and the like need a PHP CLI (RBP_TOOL_PHP)",
    );
  return { php: path.join(binDir, 'php'), binDir, version: operator?.version ?? o.server.php, origin, env };
}
