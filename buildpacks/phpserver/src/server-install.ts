/**
 * The application server (FrankenPHP) in a cached launch layer, from the upstream release named in
 * buildpack.toml, the operator's mirror, or the operator's own binary (RBP_TOOL_FRANKENPHP). Upstream
 * publishes no checksum: lib/deps refuses a download without one from buildpack.toml or the mirror.
 */
import { installTool, resolveVersion, type DependencySpec, type ToolOrigin } from '../../../lib/deps/index.ts';
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
  return {
    path: tool.path,
    version: tool.version ?? 'unknown',
    php: o.version.php,
    caddy: o.version.caddy,
    source: tool.source,
  };
}
