/**
 * Build side of the server choice (see server.ts for the precedence): installs the server that will
 * run, validates a Caddyfile with the Caddy that will run it, and checks sws.toml.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import type { BuildContext } from '../../../lib/cnb/context.ts';
import { UserError } from '../../../lib/errors.ts';
import { appListenPort } from '../../../lib/launch/ports.ts';
import type { Logger } from '../../../lib/log.ts';
import { locateCaddyfile, validateCaddyfile } from './caddyfile.ts';
import type { StaticConfig } from './config.ts';
import { show } from './paths.ts';
import { CADDY_VERSION, STATIC_PORT_VARIABLE, SWS_VERSION, type StaticDecision } from './server.ts';
import { installStaticTool } from './tools.ts';

export type ServerChoice = Pick<StaticDecision, 'mode' | 'bin' | 'caddyfile' | 'swsConfig'> & {
  /** Files the server reads, to keep in the build cache. */
  configFiles: string[];
};

const caddyRequest = (purpose: string) => ({ id: 'caddy', label: 'Caddy', constraint: CADDY_VERSION, launch: true, versionArgs: ['version'], purpose });

/** `index` is the webroot's index file (index.html or index.htm), `webroot` its folder. */
export async function chooseServer(ctx: BuildContext, cfg: StaticConfig, log: Logger, webroot: { rel: string; index: string }): Promise<ServerChoice> {
  const caddyfile = locateCaddyfile(cfg, ctx.appDir);
  const present = caddyfile ? [caddyfile.rel] : [];
  if (cfg.forceCaddy) {
    log.info(`server: caddy file-server (CC_STATIC_SERVER=caddy)${caddyfile ? `; ${show(caddyfile.rel)} is not used` : ''}`);
    // caddy file-server's index names are index.html and index.txt, and it has no flag to change
    // them: an index.htm is served at its own path only.
    if (webroot.index !== 'index.html') {
      log.warn(
        `caddy file-server does not take ${show(path.posix.join(webroot.rel, webroot.index))} as the index of ${show(webroot.rel)} (its index names are index.html and index.txt): the site's / will answer 404. Rename it to index.html, or leave CC_STATIC_SERVER unset (Static Web Server serves index.htm)`,
      );
    }
    const caddy = await installStaticTool(ctx, caddyRequest('CC_STATIC_SERVER=caddy serves the site with caddy file-server'), log);
    return { mode: 'caddy-file-server', bin: caddy.path, configFiles: present };
  }
  if (caddyfile) {
    const caddy = await installStaticTool(ctx, caddyRequest(`a Caddyfile (${show(caddyfile.rel)}) is served by Caddy`), log);
    // The port the launch would give the server, for the Caddyfile's {$PORT}.
    const port = appListenPort(ctx.env, STATIC_PORT_VARIABLE, ctx.appDir);
    const v = await log.step(`validating ${show(caddyfile.rel)} with caddy validate`, () => validateCaddyfile(caddy.path, caddyfile.abs, port, ctx.env));
    if (v.valid) {
      log.info(`server: caddy run with ${show(caddyfile.rel)} (a valid Caddyfile${caddyfile.explicit ? ' named by CC_STATIC_CADDYFILE' : ' at the root'})`);
      return { mode: 'caddy-run', bin: caddy.path, caddyfile: caddyfile.rel, configFiles: present };
    }
    log.warn(`${show(caddyfile.rel)} is not a valid Caddyfile, so it is not used. Caddy says: ${v.message.replaceAll(`${ctx.appDir}/`, '/')}`);
    // Installed for validation only: not part of the launch image.
    if (caddy.layer) ctx.layers.writeToml(caddy.layer.name, { cache: true }, caddy.layer.metadata);
  }
  const swsConfig = checkSwsToml(ctx.appDir, log);
  log.info(`server: Static Web Server${swsConfig ? ` with ${show(swsConfig)}` : ''} (the default)`);
  const sws = await installStaticTool(
    ctx,
    {
      id: 'static-web-server',
      label: 'Static Web Server',
      constraint: SWS_VERSION,
      launch: true,
      versionArgs: ['--version'],
      purpose: 'Static Web Server serves the site by default',
    },
    log,
  );
  return { mode: 'static-web-server', bin: sws.path, ...(swsConfig ? { swsConfig } : {}), configFiles: present };
}

/**
 * The project's sws.toml, if any. Static Web Server gives the file precedence over its command line,
 * so a port or root set there silently beats CC_STATIC_PORT and the webroot: say so.
 */
export function checkSwsToml(appDir: string, log: Logger): string | undefined {
  const file = path.join(appDir, 'sws.toml');
  if (!fs.existsSync(file)) return undefined;
  let t: { general?: Record<string, unknown> };
  try {
    t = parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UserError({
      id: 'static/sws-toml/parse',
      title: 'sws.toml is not valid TOML',
      seen: { what: 'sws.toml', value: '/sws.toml', where: 'the project root' },
      rule: 'sws.toml is Static Web Server’s configuration file, in TOML',
      details: [(e as Error).message.split('\n')[0] ?? ''],
      fix: 'fix the file, or remove it',
    });
  }
  for (const [key, instead] of [
    ['port', 'CC_STATIC_PORT (or 9000 behind a request-flow middleware)'],
    ['root', 'the webroot'],
    ['host', 'the host 0.0.0.0'],
  ] as const) {
    if (t.general?.[key] !== undefined)
      log.warn(`sws.toml sets general.${key} = ${JSON.stringify(t.general[key])}: Static Web Server gives it precedence over ${instead}`);
  }
  return 'sws.toml';
}
