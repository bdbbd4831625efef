/**
 * The port plan (contract, "Ports exposed by the application"): the public port is 8080 (`rbp run
 * --port` moves it locally, as RBP_PUBLIC_PORT); the app listens on it, or on its runtime's port
 * variable, unless a request-flow middleware is active: then the app listens on 9000 and the
 * middlewares chain from the public port inward. RBP_APP_PORT (operator configuration) moves that
 * 9000 for runs that must not collide, such as tests running side by side.
 */
import { read } from '../config/read.ts';
import { UserError } from '../errors.ts';
import { bindable } from './request-flow/allocate.ts';
import { isActive } from './request-flow/activation.ts';

export const PUBLIC_PORT = 8080;
export const APP_PORT_BEHIND_MIDDLEWARE = 9000;

// An invalid port variable is the variable's user error (lib/config), never a silent 8080.
export function publicPort(env: NodeJS.ProcessEnv): number {
  return read<number>(env, 'RBP_PUBLIC_PORT')?.value ?? PUBLIC_PORT;
}

/** 9000, or the operator's RBP_APP_PORT. */
export function appPortBehindMiddleware(env: NodeJS.ProcessEnv): number {
  return read<number>(env, 'RBP_APP_PORT')?.value ?? APP_PORT_BEHIND_MIDDLEWARE;
}

/**
 * Without a middleware, the variables that say the app's port, first set first: the runtime's own
 * (CC_STATIC_PORT, CC_PHPSERVER_PORT; none for node), then the public port's; else PUBLIC_PORT. A
 * stored plan names the same chain for the launch to read its port from (stored-plan.ts).
 */
export function portChain(runtimeVar: string | undefined): string[] {
  return [...(runtimeVar ? [runtimeVar] : []), 'RBP_PUBLIC_PORT'];
}

/** The app's port and where it came from: a variable of the chain, the request flow's, or the default. */
export interface AppPort {
  port: number;
  /** The variable that set it, or how it was decided when none did. */
  source: string;
}

/** The port the application itself must listen on; `runtimeVar` is CC_STATIC_PORT, CC_PHPSERVER_PORT or none. */
export function appPort(env: NodeJS.ProcessEnv, runtimeVar?: string, appDir?: string): AppPort {
  if (isActive(env, appDir ?? process.cwd())) {
    const app = read<number>(env, 'RBP_APP_PORT');
    return { port: appPortBehindMiddleware(env), source: app?.source === 'env' ? 'RBP_APP_PORT' : `behind the request flow (${APP_PORT_BEHIND_MIDDLEWARE})` };
  }
  // A variable counts when set; the runtime's declared default (8080) is the public port's.
  for (const name of portChain(runtimeVar)) {
    const p = read<number>(env, name);
    if (p?.source === 'env') return { port: p.value, source: name };
  }
  return { port: PUBLIC_PORT, source: `the public port (${PUBLIC_PORT})` };
}

/** appPort's number. */
export function appListenPort(env: NodeJS.ProcessEnv, runtimeVar?: string, appDir?: string): number {
  return appPort(env, runtimeVar, appDir).port;
}

/**
 * Nothing may listen on the app's port when it starts. Checked before the launch (rbp run, rbp
 * deploy; the planner checks a request flow's ports): Caddy and FrankenPHP bind with SO_REUSEPORT, so
 * a second server on a busy port does not fail, it silently shares the port with the first.
 */
export async function checkPortFree(port: number): Promise<void> {
  if (await bindable(port)) return;
  throw new UserError({
    id: 'launch/port/busy',
    title: `Port ${port} is already in use`,
    seen: { what: 'port', value: String(port) },
    rule: 'The app listens on the public port (PORT): nothing else may listen there when it starts.',
    fix: 'Stop what listens there, or use another port (rbp run --port).',
  });
}
