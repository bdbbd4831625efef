/**
 * The request-flow plan: the chain (chain.ts), its ports and each middleware's command. The first
 * middleware listens on the public port, each forwards to the next, the last to the app's port
 * (9000, or RBP_APP_PORT); the ports in between are allocated here and never collide.
 */
import { UserError } from '../../errors.ts';
import { appPortBehindMiddleware, publicPort } from '../ports.ts';
import type { MiddlewareKind } from './activation.ts';
import { allocatePorts, bindable } from './allocate.ts';
import { planChain } from './chain.ts';
import { blockSpec, middlewareSpec, type MiddlewareSpec } from './middlewares.ts';

export interface FlowPlan {
  publicPort: number;
  appPort: number;
  /** The public port answers 403 to everything. */
  block: boolean;
  /** From the public port inward. */
  chain: MiddlewareKind[];
  /** Active but not started, because public access is blocked. */
  skipped: MiddlewareKind[];
  middlewares: MiddlewareSpec[];
}

/** The plan, or undefined when nothing stands between the public port and the app. */
export async function planFlow(env: NodeJS.ProcessEnv, appDir: string): Promise<FlowPlan | undefined> {
  const chain = planChain(env, appDir);
  if (!chain.block && chain.middlewares.length === 0) return undefined;
  const pub = publicPort(env);
  const app = appPortBehindMiddleware(env);
  if (pub === app) {
    throw new UserError({
      id: 'request-flow/ports/collide',
      title: 'The public port and the app port are the same',
      seen: { what: 'port', value: String(pub) },
      rule: `With a request-flow middleware the app listens on ${app} and the chain on the public port ${pub}; they must differ.`,
      fix: 'Use another public port (rbp run --port), or move the app with RBP_APP_PORT.',
    });
  }
  const inner = await allocatePorts(Math.max(0, chain.middlewares.length - 1), [pub, app]);
  const listens = [pub, ...inner];
  const middlewares = chain.block
    ? [blockSpec(pub, appDir)]
    : chain.middlewares.map((kind, i) => middlewareSpec(kind, { listen: listens[i]!, forward: listens[i + 1] ?? app, isPublic: i === 0 }, env, appDir));
  return { publicPort: pub, appPort: app, block: chain.block, chain: chain.middlewares, skipped: chain.skipped, middlewares };
}

/** Every port of the flow is free at launch: the public port, the ports between middlewares and the app's. */
export async function checkFlowPortsFree(flow: Pick<FlowPlan, 'publicPort' | 'appPort' | 'middlewares'>): Promise<void> {
  const ports = [...new Set([flow.publicPort, ...flow.middlewares.map((m) => m.listen), flow.appPort])];
  for (const port of ports) {
    if (await bindable(port)) continue;
    throw new UserError({
      id: 'request-flow/ports/busy',
      title: 'A port of the request flow is already in use',
      seen: { what: 'port', value: String(port) },
      rule: `The request flow needs the public port ${flow.publicPort}, the app port ${flow.appPort} and the ports between its middlewares free at launch.`,
      fix:
        port === flow.appPort
          ? 'Stop what listens there, or move the app with RBP_APP_PORT.'
          : 'Stop what listens there, or use another public port (rbp run --port).',
    });
  }
}
