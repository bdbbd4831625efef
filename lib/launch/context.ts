/**
 * The launch context: what the launch decides once, before any runtime plans its command (issue
 * "Parse once, decide once", item 2). The request flow and the port plan (ports.ts) give the port the
 * app listens on; each runtime's plan takes that port as given and never looks it up itself.
 */
import { raw } from '../config/read.ts';
import type { UserError } from '../errors.ts';
import type { Plan } from './entry.ts';
import { appListenPort } from './ports.ts';

export interface LaunchContext {
  /** The launch environment. */
  env: NodeJS.ProcessEnv;
  /** The app's folder (the process's working directory at launch). */
  appDir: string;
  /**
   * The port the app listens on, as it goes on a command line. At run time the decided number; when
   * the build writes the direct launch script (direct.ts), a reference the script fills in.
   */
  port: string;
}

/** What a runtime gives the launch: its own port variable, and how it plans its command. */
export interface RuntimeLaunch {
  /** CC_STATIC_PORT, CC_PHPSERVER_PORT; none for node (its app reads PORT). */
  portVariable?: string;
  /**
   * The operator's variable naming a server of the run image that replaces the built one at launch
   * (RBP_TOOL_FRANKENPHP), and the built one's path: the direct launch script reads it at run time.
   */
  serverOverride?: { variable: string; builtPath: string };
  /**
   * Run environments the runtime refuses outright (phpserver on a pico instance): when `variable`
   * holds `value` (trimmed, any case), the launch stops with `error` before anything starts. The
   * direct launch script checks them itself; the Node.js launcher before it plans.
   */
  refusals?: Refusal[];
  plan(ctx: LaunchContext): Plan | Promise<Plan>;
}

export interface Refusal {
  variable: string;
  value: string;
  error: (seen: string) => UserError;
}

/** Throws the error of the first refusal the environment meets. */
export function checkRefusals(runtime: RuntimeLaunch, env: NodeJS.ProcessEnv): void {
  for (const r of runtime.refusals ?? []) {
    const seen = raw(env, r.variable);
    if (seen !== undefined && seen.toLowerCase() === r.value.toLowerCase()) throw r.error(seen);
  }
}

/**
 * The app's port variables: PORT always (a Caddyfile's {$PORT}, a run command's $PORT, a node app's
 * process.env.PORT); behind the request flow the runtime's own variable says the same port, so an app
 * that reads it does not listen on the public port.
 */
export function portEnv(port: string, portVariable: string | undefined, behindFlow: boolean): Record<string, string> {
  return { PORT: port, ...(behindFlow && portVariable ? { [portVariable]: port } : {}) };
}

/** The context the launch gives a runtime: the port is the port plan's (ports.ts), 9000 behind the request flow. */
export function launchContext(env: NodeJS.ProcessEnv, appDir: string, portVariable: string | undefined): LaunchContext {
  return { env, appDir, port: String(appListenPort(env, portVariable, appDir)) };
}
