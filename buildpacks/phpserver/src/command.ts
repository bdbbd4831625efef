/**
 * The launch command (contract, CC_RUN_COMMAND and CC_PHPSERVER_PORT): by default
 * `<server> php-server --listen 0.0.0.0:<port> --root <webroot>`, with `--worker <script>` in worker
 * mode; the port is CC_PHPSERVER_PORT (8080), or 9000 behind request-flow middleware.
 * CC_RUN_COMMAND replaces the whole command and runs through the shell, where `frankenphp` and `php`
 * are on PATH (`frankenphp php-server --debug --mercure`, `frankenphp run --config Caddyfile`).
 * PHP's configuration (PHPRC, PHP_INI_SCAN_DIR: php-ini.ts) comes from the php layer's exec.d
 * program, which every launcher runs, so the plan sets no variable.
 */
import { shellCommand } from '../../../lib/launch/exec.ts';
import path from 'node:path';
import type { LaunchDecision } from '../../../lib/launch/decision.ts';
import type { LaunchContext, RuntimeLaunch, RuntimePlan } from '../../../lib/launch/plan.ts';
import { raw } from '../../../lib/config/read.ts';
import { PICO_REFUSAL } from './instance.ts';

export interface PhpServerDecision extends LaunchDecision {
  runtime: 'phpserver';
  /** Relative to the app root; `.` for the root. */
  webroot: string;
  /**
   * `path`: relative to the buildpack's layers when installed there, else the operator's own.
   * `variable`: the operator variable that names this line's server at launch (RBP_TOOL_FRANKENPHP, RBP_TOOL_FRANKENPHP_8_5).
   */
  server: { id: string; version: string; php: string; caddy: string; path: string; source: string; variable?: string };
  /** Relative to the app root, validated at build. */
  worker?: string;
}

export function planPhpServer(d: PhpServerDecision, { env, appDir, layersDir, port }: LaunchContext): RuntimePlan {
  const server = raw(env, overrideVariable(d)) ?? path.resolve(layersDir, d.server.path);
  const root = path.resolve(appDir, d.webroot);
  const worker = d.worker ? path.resolve(appDir, d.worker) : undefined;
  const facts = {
    runtime: 'phpserver',
    webroot: root,
    server: { ...d.server, path: server },
    ...(worker ? { worker } : {}),
  };
  const runCommand = raw(env, 'CC_RUN_COMMAND');
  if (runCommand) {
    return { argv: shellCommand(runCommand), env: {}, cwd: appDir, facts: { ...facts, command: 'CC_RUN_COMMAND' } };
  }
  const argv = [server, 'php-server', '--listen', `0.0.0.0:${port}`, '--root', root, ...(worker ? ['--worker', worker] : [])];
  return { argv, env: {}, cwd: appDir, facts: { ...facts, command: worker ? 'php-server (worker mode)' : 'php-server' } };
}

export const PHPSERVER_PORT_VARIABLE = 'CC_PHPSERVER_PORT';

/** The operator variable naming the run image's server of this build's line (an older build: the default's). */
const overrideVariable = (d: PhpServerDecision): string => d.server.variable ?? 'RBP_TOOL_FRANKENPHP';

/** The phpserver runtime's launch: its port variable, its refusal and its plan. */
export const phpServerLaunch = (d: PhpServerDecision): RuntimeLaunch => ({
  portVariable: PHPSERVER_PORT_VARIABLE,
  refusals: [PICO_REFUSAL],
  plan: (ctx) => planPhpServer(d, ctx),
});
