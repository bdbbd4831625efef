/**
 * The application server (FrankenPHP) in a cached launch layer, from the upstream release named in
 * buildpack.toml, the operator's mirror, or the operator's own binary: RBP_TOOL_FRANKENPHP for the
 * default line, RBP_TOOL_FRANKENPHP_8_5 (else an RBP_TOOL_FRANKENPHP that runs PHP 8.5) for
 * CC_PHP_VERSION=8.5. An operator's server whose PHP is of another line than the one selected is
 * refused: the app never runs a PHP it did not ask for. Another patch release, server or Caddy
 * version is a warning.
 */
import fs from 'node:fs';
import { findOperatorTool, installTool, readToolVersion, resolveVersion, type DependencySpec, type ToolOrigin } from '../../../lib/deps/index.ts';
import type { Layers } from '../../../lib/cnb/layers.ts';
import { UserError } from '../../../lib/errors.ts';
import type { Logger } from '../../../lib/log.ts';
import { phpLine, serverVariable, type ServerVersion } from './server-version.ts';

export const SERVER_ID = 'frankenphp';

export interface InstalledServer {
  /** The executable: `<layer>/bin/frankenphp`, or the operator's path. */
  path: string;
  version: string;
  php: string;
  caddy: string;
  source: ToolOrigin;
  /** The operator variable that names this line's server, at build and at launch. */
  variable: string;
}

// `frankenphp version` prints `FrankenPHP v1.9.1 PHP 8.4.12 Caddy v2.10.2 …`.
const VERSION_ARGS = ['version'];
const VERSION_PATTERN = /FrankenPHP v?(\d+\.\d+\.\d+)/;

export async function installServer(o: {
  version: ServerVersion;
  specs: DependencySpec[];
  layers: Layers;
  env: Record<string, string | undefined>;
  log: Logger;
}): Promise<InstalledServer> {
  const variable = serverVariable(o.version);
  const base = { php: o.version.php, caddy: o.version.caddy, variable };
  // The 8.5 line's own variable first; the general one (and the download) otherwise.
  if (variable !== 'RBP_TOOL_FRANKENPHP') {
    const lineId = `${SERVER_ID}-${o.version.selector}`;
    const own = await findOperatorTool({
      id: lineId,
      env: o.env,
      log: o.log,
      versionArgs: VERSION_ARGS,
      versionPattern: VERSION_PATTERN,
      expected: o.version.server,
      sbom: { layersDir: o.layers.dir, target: 'launch' },
    });
    if (own) {
      if (fs.existsSync(o.layers.dir)) o.layers.remove(SERVER_ID);
      return checkOperatorServer({ path: own.path, version: own.version ?? 'unknown', source: 'operator', ...base }, o.version, variable, o.log);
    }
  }
  const origin = { what: 'CC_PHP_VERSION', where: 'the application environment' };
  const spec = resolveVersion(o.specs, SERVER_ID, o.version.server, undefined, origin);
  const tool = await installTool({
    layers: o.layers,
    layerName: SERVER_ID,
    spec,
    types: { launch: true },
    env: o.env,
    log: o.log,
    versionArgs: VERSION_ARGS,
    versionPattern: VERSION_PATTERN,
  });
  const installed: InstalledServer = { path: tool.path, version: tool.version ?? 'unknown', source: tool.source, ...base };
  if (tool.source !== 'operator') return installed;
  return checkOperatorServer(installed, o.version, 'RBP_TOOL_FRANKENPHP', o.log);
}

/**
 * The operator's server carries its own PHP and Caddy: say which. A PHP of another line than the
 * selected one is an error; another patch release of it, or another Caddy, a warning (lib/deps
 * already warns about the server's own version).
 */
async function checkOperatorServer(server: InstalledServer, want: ServerVersion, from: string, log: Logger): Promise<InstalledServer> {
  const { output } = await readToolVersion(server.path, VERSION_ARGS, /./);
  const built = parseServerVersion(output);
  if (built.php && phpLine(built.php) !== phpLine(want.php)) throw otherLineError(want, from, server.path, built.php);
  for (const [what, wanted, got] of [
    ['PHP', want.php, built.php],
    ['Caddy', want.caddy, built.caddy],
  ] as const) {
    if (got && !sameLine(got, wanted)) log.warn(`${from} runs ${what} ${got}, not ${wanted} as the contract asks for the application server ${want.server}`);
  }
  return { ...server, php: built.php ?? server.php, caddy: built.caddy ?? server.caddy };
}

/** The operator's server runs a PHP of another line than the one the app selected. */
export function otherLineError(want: ServerVersion, from: string, file: string, php: string): UserError {
  const line = phpLine(want.php);
  const selected = want.selector === '8.5' ? 'CC_PHP_VERSION=8.5 selects' : 'The default line (CC_PHP_VERSION unset or 8.4) is';
  return new UserError({
    id: 'phpserver/server/php-line',
    title: `The application server the operator provides runs PHP ${php}, not PHP ${line}`,
    seen: { what: from, value: file, where: 'the operator configuration' },
    rule: `${selected} the application server ${want.server} with PHP ${want.php}; an app never runs a PHP of another line than the one it selected`,
    fix:
      want.selector === '8.5'
        ? `the operator sets RBP_TOOL_FRANKENPHP_8_5 to a FrankenPHP built on PHP 8.5 (scripts/tools/frankenphp.sh 1.12.2 builds one where PHP 8.5's source is reachable), or leaves both unset to install ${want.server}; or unset CC_PHP_VERSION to run the default line`
        : `the operator sets RBP_TOOL_FRANKENPHP to a FrankenPHP built on PHP ${line} (scripts/tools/frankenphp.sh), or unsets it to install ${want.server}`,
  });
}

/** `FrankenPHP v1.11.1 PHP 8.2.32 Caddy v2.10.2 h1:…` → the PHP and Caddy versions it names. */
export function parseServerVersion(line: string): { php?: string; caddy?: string } {
  const php = /\bPHP (\d+\.\d+(?:\.\d+)?)/.exec(line)?.[1];
  const caddy = /\bCaddy v?(\d+\.\d+\.\d+)/.exec(line)?.[1];
  return { ...(php ? { php } : {}), ...(caddy ? { caddy } : {}) };
}

/** `8.5.1` is of the line `8.5`; `8.4.12` only equals `8.4.12`. */
function sameLine(got: string, want: string): boolean {
  return got === want || got.startsWith(`${want}.`);
}
