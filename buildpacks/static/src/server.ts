/**
 * Which web server serves the site (contract, `static` rule 5) and its command line.
 *
 * Precedence, decided at build (the server binary is installed then): CC_STATIC_SERVER=caddy forces
 * `caddy file-server` (a variable beats a file); else a valid Caddyfile runs `caddy run` with it; else
 * Static Web Server. At launch, CC_RUN_COMMAND replaces all of them; the port is the launch's
 * (CC_STATIC_PORT, 9000 behind a request-flow middleware: lib/launch/ports.ts). CC_RUN_COMMAND and
 * CC_STATIC_FLAGS are read from the launch environment (a plan stored at build holds while they are
 * as at build: lib/launch/stored-plan.ts).
 */
import { shellCommand } from '../../../lib/launch/exec.ts';
import path from 'node:path';
import { parse } from 'shell-quote';
import type { LaunchDecision } from '../../../lib/launch/decision.ts';
import type { LaunchContext, RuntimeLaunch, RuntimePlan } from '../../../lib/launch/plan.ts';
import { raw } from '../../../lib/config/read.ts';
import { UserError } from '../../../lib/errors.ts';
import { INDEX_FILES } from './webroot.ts';

export const SWS_VERSION = '2.42.0';
export const CADDY_VERSION = '2.11.2';

export type ServerMode = 'static-web-server' | 'caddy-run' | 'caddy-file-server';

export interface StaticDecision extends LaunchDecision {
  runtime: 'static';
  /** The served folder, relative to the app root ('' = the root). */
  webroot: string;
  mode: ServerMode;
  /** The server executable: an installed layer's, relative to the buildpack's layers, or the operator's. */
  bin: string;
  /** caddy-run: the Caddyfile, relative to the root. */
  caddyfile?: string;
  /** static-web-server: the project's sws.toml, relative to the root. */
  swsConfig?: string;
}

/** CC_STATIC_FLAGS split as a POSIX shell would; anything but words (pipes, globs) is refused. */
export function parseFlags(raw: string | undefined): string[] {
  if (!raw?.trim()) return [];
  const words = parse(raw, (name) => `$${name}`);
  const bad = words.find((w) => typeof w !== 'string');
  if (bad !== undefined) {
    throw new UserError({
      id: 'static/flags/invalid',
      title: 'CC_STATIC_FLAGS holds shell syntax, not only flags',
      seen: { what: 'CC_STATIC_FLAGS', value: raw, where: 'the application environment' },
      rule: 'CC_STATIC_FLAGS is a list of command-line flags for the web server, split like a shell does; operators, redirections and globs are not allowed',
      fix: 'keep only flags and their values (quote values holding spaces or *), or use CC_RUN_COMMAND for a full command',
      details: [`found: ${JSON.stringify(bad)}`],
    });
  }
  return words as string[];
}

/** The command that serves the site, from the build's decision, the port it is given and the run environment. */
export function serverPlan(d: StaticDecision, { env, appDir, layersDir, port }: LaunchContext): RuntimePlan {
  const root = path.join(appDir, d.webroot);
  const bin = path.resolve(layersDir, d.bin);
  const facts = { runtime: 'static', webroot: `/${d.webroot}` };
  const run = raw(env, 'CC_RUN_COMMAND');
  if (run) return { argv: shellCommand(run), env: {}, cwd: appDir, facts: { ...facts, server: 'CC_RUN_COMMAND' } };
  const flags = parseFlags(raw(env, 'CC_STATIC_FLAGS'));
  const serve = (argv: string[], more: Record<string, unknown>): RuntimePlan => ({
    argv: [...argv, ...flags],
    env: {},
    cwd: appDir,
    facts: { ...facts, ...more },
  });
  switch (d.mode) {
    case 'caddy-run':
      // The port reaches the Caddyfile as {$PORT} (the launch sets PORT).
      return serve([bin, 'run', '--config', path.join(appDir, d.caddyfile!), '--adapter', 'caddyfile'], { server: 'caddy', caddyfile: `/${d.caddyfile}` });
    case 'caddy-file-server':
      return serve([bin, 'file-server', '--root', root, '--listen', `:${port}`], { server: 'caddy' });
    case 'static-web-server': {
      // Static Web Server's index is index.html alone unless told otherwise; the contract's webroot
      // may hold index.htm instead.
      const config = d.swsConfig ? ['--config-file', path.join(appDir, d.swsConfig)] : [];
      const argv = [bin, '--host', '0.0.0.0', '--port', String(port), '--root', root, '--index-files', INDEX_FILES.join(','), ...config];
      return serve(argv, { server: 'static-web-server' });
    }
  }
}

/** The static runtime's launch: its port variable and its plan. */
export const staticLaunch = (d: StaticDecision): RuntimeLaunch => ({ portVariable: STATIC_PORT_VARIABLE, plan: (ctx) => serverPlan(d, ctx) });

export const STATIC_PORT_VARIABLE = 'CC_STATIC_PORT';
