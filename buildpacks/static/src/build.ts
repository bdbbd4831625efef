import type { BuildContext } from '../../../lib/cnb/context.ts';
import { adoptForeignVariables } from '../../../lib/config/foreign.ts';
import { readAppPath } from '../../../lib/config/read.ts';
import { UserError } from '../../../lib/errors.ts';
import { inLayers } from '../../../lib/launch/decision.ts';
import { installLaunch } from '../../../lib/launch/install.ts';
import { Logger } from '../../../lib/log.ts';
import { cacheContent, isKept, missingPaths, pruneTo } from './build-cache.ts';
import { readConfig } from './config.ts';
import { rootPath, show } from './paths.ts';
import { chooseServer } from './server-choice.ts';
import { staticLaunch, type StaticDecision } from './server.ts';
import { describePlan, planSite, runCommand, runGenerator } from './site-build.ts';
import { chooseWebroot, requireIndex } from './webroot.ts';

/** bin/build (scripts/build.mjs runs it through runBuild). */
export default async function build(ctx: BuildContext): Promise<void> {
  const log = new Logger();
  log.section('rbp/static');
  for (const note of adoptForeignVariables(ctx.env, 'static')) log.info(note);
  const cfg = readConfig(ctx.env, ctx.appDir);

  // Rules 1–2: CC_BUILD_COMMAND, else a detected generator, else the files as they are.
  const site = planSite(cfg, ctx.appDir);
  log.info(describePlan(site, cfg));
  if (site.kind === 'command') await runCommand(ctx, site.command, log);
  if (site.kind === 'generator') await runGenerator(ctx, site.detection, cfg, log);

  // Rule 3: CC_WEBROOT wins over the auto-build folder; the webroot needs an index.
  const webroot = chooseWebroot(cfg, ctx.appDir, site.kind === 'generator');
  const index = requireIndex(webroot, site.kind === 'none' ? 'to be served' : 'after the build');
  log.info(`webroot: ${show(webroot.rel)} (${webroot.why}), index ${index}`);

  // Rule 5: the server.
  const server = await chooseServer(ctx, cfg, log, { rel: webroot.rel, index });

  // Rule 4: the build cache content, which is what the built app keeps.
  // The cache proxy's file is kept as the launch finds it (lib/config's resolver: trimmed, and a
  // leading / is the app root, so /conf/cache.vcl is kept too).
  const cacheFile = readAppPath(ctx.env, 'CC_CACHE_FILE', ctx.appDir);
  const extra = cacheFile ? [rootPath(cacheFile).rel] : [];
  const content = cacheContent({
    appDir: ctx.appDir,
    autoBuild: site.kind === 'generator',
    webrootSet: cfg.webroot !== undefined,
    webroot: webroot.rel,
    override: cfg.overrideBuildcache,
    configFiles: [...server.configFiles, ...extra],
  });
  const needed = [webroot.rel, ...(server.caddyfile ? [server.caddyfile] : [])].filter((p) => !isKept(p, content.paths));
  if (needed.length) {
    throw new UserError({
      id: 'static/buildcache/drops-site',
      title: 'CC_OVERRIDE_BUILDCACHE leaves out what the server needs',
      seen: { what: 'CC_OVERRIDE_BUILDCACHE', value: cfg.overrideBuildcache ?? '', where: 'the application environment' },
      rule: 'the build cache content is all the deployed application holds, so it must include the served folder and the Caddyfile in use',
      details: needed.map((p) => `missing: ${show(p)}`),
      fix: `add ${needed.map(show).join(' and ')} to CC_OVERRIDE_BUILDCACHE`,
    });
  }
  for (const m of missingPaths(ctx.appDir, content.paths)) log.warn(`CC_OVERRIDE_BUILDCACHE lists ${show(m)}, which does not exist`);
  const removed = await log.step(`build cache: ${content.why}: keeping ${content.paths.map(show).join(', ')}`, () => pruneTo(ctx.appDir, content.paths));
  if (removed.length)
    log.detail(`removed from the application: ${removed.slice(0, 10).map(show).join(', ')}${removed.length > 10 ? ` and ${removed.length - 10} more` : ''}`);

  const decision: StaticDecision = { runtime: 'static', webroot: webroot.rel, mode: server.mode, bin: inLayers(ctx.layersDir, server.bin) };
  if (server.caddyfile) decision.caddyfile = server.caddyfile;
  if (server.swsConfig) decision.swsConfig = server.swsConfig;
  await installLaunch(ctx, decision, { stored: staticLaunch(decision) });
}
