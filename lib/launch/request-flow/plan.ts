/**
 * The request-flow plan: the chain (chain.ts), its ports and each middleware's command. The first
 * middleware listens on the public port, each forwards to the next, the last to the app's port
 * (9000, or RBP_APP_PORT); the ports in between are allocated here and never collide.
 */
import { UserError } from '../../errors.ts';
import { appPortBehindMiddleware, publicPort } from '../ports.ts';
import type { MiddlewareKind } from './activation.ts';
import { allocatePorts } from './allocate.ts';
import { planChain } from './chain.ts';
import { middlewareSpec, type MiddlewareSpec } from './middlewares.ts';

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
  const middlewares = chain.middlewares.map((kind, i) =>
    middlewareSpec(kind, { listen: listens[i]!, forward: listens[i + 1] ?? app, isPublic: i === 0 }, env, appDir),
  );
  return { publicPort: pub, appPort: app, block: chain.block, chain: chain.middlewares, skipped: chain.skipped, middlewares };
}
