/**
 * bin/build for `phpserver`: checks the input (instance, PHP version, webroot, worker, Composer files
 * and extensions) before anything is installed, then installs the application server, the `php`
 * command and the Composer dependencies, and records what the launch needs.
 */
import type { BuildContext } from '../../../lib/cnb/context.ts';
import { dependenciesOf } from '../../../lib/deps/index.ts';
import { inLayers } from '../../../lib/launch/decision.ts';
import { installLaunch } from '../../../lib/launch/install.ts';
import { Logger } from '../../../lib/log.ts';
import { phpServerLaunch, type PhpServerDecision } from './command.ts';
import { readComposerProject } from './composer-files.ts';
import { composerFlags, composerInstall, findComposer } from './composer.ts';
import { checkExtensions, checkLineExtensions, extensionRequirements, type ExtensionRequirement } from './extensions.ts';
import { checkInstance } from './instance.ts';
import { installPhpCommand } from './php-command.ts';
import { installServer, type InstalledServer } from './server-install.ts';
import { serverExtensions } from './server-extensions.ts';
import { keyValueAddon } from './kv-addon.ts';
import { selectServer } from './server-version.ts';
import { resolveWebroot } from './webroot.ts';
import { resolveWorker } from './worker.ts';
import { value } from '../../../lib/config/read.ts';
import { adoptForeignVariables } from '../../../lib/config/foreign.ts';
import { iniExtensionRequirements } from './ini-requirements.ts';

/** bin/build (scripts/build.mjs runs it through runBuild). */
export default async function build(ctx: BuildContext): Promise<void> {
  const log = new Logger();
  const { env, appDir } = ctx;
  for (const note of adoptForeignVariables(env, 'phpserver')) log.info(note);

  checkInstance(value(env, 'RBP_INSTANCE_SIZE'));
  const version = selectServer(env);
  log.info(
    `application server ${version.server} (PHP ${version.php}, Caddy ${version.caddy})${version.selector === '8.5' ? ' selected by CC_PHP_VERSION=8.5' : ''}`,
  );
  const webroot = resolveWebroot(appDir, env);
  log.info(`webroot: ${webroot.rel === '.' ? '/ (project root)' : `/${webroot.rel}`}`);
  const worker = resolveWorker(appDir, webroot, value(env, 'CC_PHPSERVER_WORKER'));
  if (worker) log.info(`worker mode: ${worker} (CC_PHPSERVER_WORKER)`);
  const kv = keyValueAddon(env);
  if (kv) log.info(kv);
  const project = readComposerProject(appDir);
  const flags = composerFlags(env);
  // Extensions asked for by the Composer files and by php.ini (its session handler, its extension= lines).
  const fromIni = iniExtensionRequirements(appDir);
  const reqs = [...(project ? extensionRequirements(project.json, project.lock, flags.dev) : []), ...fromIni];
  checkLineExtensions(reqs, version);
  for (const r of fromIni) log.detail(`ext-${r.name}: ${r.by}`);

  const specs = dependenciesOf(ctx.descriptor);
  const server = await installServer({ version, specs, layers: ctx.layers, env, log });
  const php = await installPhpCommand({ layers: ctx.layers, server, appDir, env, log });
  if (reqs.length) await checkServerExtensions(reqs, server, php.env, log);

  if (project) {
    const composer = await findComposer({ appDir, env, layers: ctx.layers, specs, log });
    await composerInstall({ appDir, project, flags, composer, php: php.php, phpVersion: php.version, env: php.env, layers: ctx.layers, log });
  } else {
    ctx.layers.remove('vendor');
    log.info('no composer.json: no dependencies to install');
  }

  const decision: PhpServerDecision = {
    runtime: 'phpserver',
    webroot: webroot.rel,
    server: {
      id: 'frankenphp',
      version: server.version,
      php: server.php,
      caddy: server.caddy,
      path: inLayers(ctx.layersDir, server.path),
      source: server.source,
      variable: server.variable,
    },
    ...(worker ? { worker } : {}),
  };
  await installLaunch(ctx, decision, { stored: phpServerLaunch(decision) });
}

/**
 * The ext-* requirements against the extensions the installed server reports. A server that cannot
 * be asked on this machine (built for another one) is said, and the requirements are left to it.
 */
async function checkServerExtensions(reqs: ExtensionRequirement[], server: InstalledServer, env: Record<string, string>, log: Logger): Promise<void> {
  const names = [...new Set(reqs.map((r) => r.name))];
  const found = await serverExtensions(server.path, env);
  if ('error' in found) {
    log.warn(
      `could not ask the application server for its extensions (${found.error}): the requirements on ${names.map((n) => `ext-${n}`).join(', ')} are not checked at build`,
    );
    return;
  }
  checkExtensions(reqs, { names: found.names, label: `PHP ${found.php} (application server ${server.version})` });
  const by = [...new Set(reqs.map((r) => (r.by.startsWith('php.ini') ? 'php.ini' : 'Composer files')))].sort().join(' and ');
  log.info(`extensions required by ${by}, all available: ${names.join(', ')} (the server's own list, PHP ${found.php})`);
}
