/**
 * The application server (FrankenPHP) in a cached launch layer, from the upstream release named in
 * buildpack.toml, the operator's mirror, or the operator's own binary (RBP_TOOL_FRANKENPHP). Upstream
 * publishes no checksum: lib/deps refuses a download without one from buildpack.toml or the mirror.
 */
import { installTool, readToolVersion, resolveVersion, type DependencySpec, type ToolOrigin } from '../../../lib/deps/index.ts';
import type { Layers } from '../../../lib/cnb/layers.ts';
import type { Logger } from '../../../lib/log.ts';
import type { ServerVersion } from './server-version.ts';

export const SERVER_ID = 'frankenphp';

export interface InstalledServer {
  /** The executable: `<layer>/bin/frankenphp`, or the operator's path. */
  path: string;
  version: string;
  php: string;
  caddy: string;
  source: ToolOrigin;
}

export async function installServer(o: {
  version: ServerVersion;
  specs: DependencySpec[];
  layers: Layers;
  env: Record<string, string | undefined>;
  log: Logger;
}): Promise<InstalledServer> {
  const origin = { what: 'CC_PHP_VERSION', where: 'the application environment' };
  const spec = resolveVersion(o.specs, SERVER_ID, o.version.server, undefined, origin);
  const tool = await installTool({
    layers: o.layers,
    layerName: SERVER_ID,
    spec,
    types: { launch: true },
    env: o.env,
    log: o.log,
    // `frankenphp version` prints `FrankenPHP v1.9.1 PHP 8.4.12 Caddy v2.10.2 …`.
    versionArgs: ['version'],
    versionPattern: /FrankenPHP v?(\d+\.\d+\.\d+)/,
  });
  const installed = { path: tool.path, version: tool.version ?? 'unknown', php: o.version.php, caddy: o.version.caddy, source: tool.source };
  if (tool.source !== 'operator') return installed;
  // The operator's server carries its own PHP and Caddy: say which, and warn when they are not the
  // contract's (lib/deps already warns about the server's own version).
  const { output } = await readToolVersion(tool.path, ['version'], /./);
  const built = parseServerVersion(output);
  for (const [what, want, got] of [['PHP', o.version.php, built.php], ['Caddy', o.version.caddy, built.caddy]] as const) {
    if (got && !sameLine(got, want)) o.log.warn(`RBP_TOOL_FRANKENPHP runs ${what} ${got}, not ${want} as the contract asks for the application server ${o.version.server}`);
  }
  return { ...installed, php: built.php ?? installed.php, caddy: built.caddy ?? installed.caddy };
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
