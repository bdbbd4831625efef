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
