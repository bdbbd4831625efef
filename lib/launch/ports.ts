import { existsSync } from 'node:fs';
/**
 * The port plan (contract, "Ports exposed by the application"): the public port is 8080 (`rbp run
 * --port` moves it locally, as RBP_PUBLIC_PORT); the app listens on it, or on its runtime's port
 * variable, unless a request-flow middleware is active: then the app listens on 9000 and the
 * middlewares chain from the public port inward.
 */
export const PUBLIC_PORT = 8080;
export const APP_PORT_BEHIND_MIDDLEWARE = 9000;

export function publicPort(env: NodeJS.ProcessEnv): number {
  const n = Number(env.RBP_PUBLIC_PORT);
  return Number.isInteger(n) && n > 0 ? n : PUBLIC_PORT;
}

/**
 * Whether at least one request-flow middleware is active (contract, "Request flow" rule 2, and
 * CC_REQUEST_FLOW naming `custom` or being `block`). lib/launch's request-flow code owns the details;
 * this answer is all a runtime needs to pick its port.
 */
export function middlewareActive(env: NodeJS.ProcessEnv, appDir: string = process.cwd()): boolean {
  if (env.ACCESSPROXY_CHALLENGE_SECRET || env.CC_REDIRECTOR_PROJECT_KEY || env.CC_CACHE_FILE) return true;
  const flow = (env.CC_REQUEST_FLOW ?? '').split(',').map((s) => s.trim());
  if (flow.includes('block') || (flow.includes('custom') && env.CC_REQUEST_FLOW_CUSTOM)) return true;
  return existsSync(`${appDir}/.rbp/cache.vcl`);
}

/** The port the application itself must listen on; `runtimeVar` is CC_STATIC_PORT, CC_PHPSERVER_PORT or none. */
export function appListenPort(env: NodeJS.ProcessEnv, runtimeVar?: string, appDir?: string): number {
  if (middlewareActive(env, appDir)) return APP_PORT_BEHIND_MIDDLEWARE;
  const own = runtimeVar ? Number(env[runtimeVar]) : NaN;
  return Number.isInteger(own) && own > 0 ? own : publicPort(env);
}
