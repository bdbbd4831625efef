/**
 * The order of the chain, from the public port inward (contract, "Request flow" rules 3 and 4).
 *
 * Default order: access proxy, redirector, cache, custom. The access proxy cannot be named and is
 * always first, so nothing (not even a cached page) is served before its challenge passes.
 * CC_REQUEST_FLOW orders the middlewares it names; the active ones it does not name follow them,
 * nearer the app, in the default order. `block` alone blocks public access.
 */
import { raw as rawSetting } from '../../config/read.ts';
import { appPathError } from '../../app-path.ts';
import { redactUrl, UserError } from '../../errors.ts';
import { activeMiddlewares, BLOCK, CACHE_VCL, cacheVcl, flowItems, NAMEABLE, type MiddlewareKind, type Nameable } from './activation.ts';

export const DEFAULT_ORDER: readonly MiddlewareKind[] = ['accessproxy', 'redirector', 'cache', 'custom'];

export interface Chain {
  /** CC_REQUEST_FLOW=block: the public port answers 403, the app keeps running behind it. */
  block: boolean;
  /** The middlewares from the public port inward; empty when blocked. */
  middlewares: MiddlewareKind[];
  /** Active middlewares left out because public access is blocked. */
  skipped: MiddlewareKind[];
}

const WHERE = 'the application environment';

function flowError(id: string, title: string, value: string, rule: string, fix: string, details?: string[]): UserError {
  return new UserError({ id: `request-flow/${id}`, title, seen: { what: 'CC_REQUEST_FLOW', value, where: WHERE }, rule, fix, details });
}

/** How each nameable middleware is activated, for messages. */
const ACTIVATION: Record<Nameable, string> = {
  redirector: 'CC_REDIRECTOR_PROJECT_KEY',
  cache: `CC_CACHE_FILE or the file ${CACHE_VCL}`,
  custom: 'CC_REQUEST_FLOW_CUSTOM',
};

export function planChain(env: NodeJS.ProcessEnv, appDir: string): Chain {
  const raw = rawSetting(env, 'CC_REQUEST_FLOW') ?? '';
  const items = flowItems(env);
  const active = activeMiddlewares(env, appDir);
  checkCacheFile(env, appDir);
  checkCustomCommand(env, items);

  if (items.includes(BLOCK)) {
    if (items.length > 1) {
      throw flowError(
        'block-not-alone',
        'CC_REQUEST_FLOW mixes block with middlewares',
        raw,
        '`block` is a value on its own: it blocks public access, so no middleware can serve the public port.',
        'Set CC_REQUEST_FLOW=block alone, or list only middlewares (redirector, cache, custom).',
      );
    }
    return { block: true, middlewares: [], skipped: DEFAULT_ORDER.filter((k) => active.has(k)) };
  }

  const seen = new Set<string>();
  for (const item of items) {
    if (!(NAMEABLE as readonly string[]).includes(item)) {
      throw flowError(
        'unknown-item',
        'Unknown item in CC_REQUEST_FLOW',
        raw,
        `CC_REQUEST_FLOW is a comma-separated list of ${NAMEABLE.join(', ')}, or the single value block.`,
        `Remove or fix ${JSON.stringify(item)}.`,
      );
    }
    if (seen.has(item)) {
      throw flowError(
        'duplicate-item',
        'An item appears twice in CC_REQUEST_FLOW',
        raw,
        'Each middleware appears at most once in the chain.',
        `Name ${item} once.`,
      );
    }
    seen.add(item);
    if (!active.has(item as Nameable)) {
      throw flowError(
        'not-active',
        `CC_REQUEST_FLOW names ${item}, which is not active`,
        raw,
        `A middleware in CC_REQUEST_FLOW must be activated: ${item} by ${ACTIVATION[item as Nameable]}.`,
        `Set ${ACTIVATION[item as Nameable]}, or remove ${item} from CC_REQUEST_FLOW.`,
      );
    }
  }
  const named = items as Nameable[];
  const middlewares: MiddlewareKind[] = [
    ...(active.has('accessproxy') ? (['accessproxy'] as const) : []),
    ...named,
    ...DEFAULT_ORDER.filter((k) => k !== 'accessproxy' && active.has(k) && !named.includes(k)),
  ];
  return { block: false, middlewares, skipped: [] };
}

function checkCacheFile(env: NodeJS.ProcessEnv, appDir: string): void {
  const vcl = cacheVcl(env, appDir);
  if (!vcl?.problem) return;
  throw appPathError({
    id: 'request-flow/cache/file',
    what: vcl.source,
    value: vcl.shown,
    problem: vcl.problem,
    kind: 'file',
    where: vcl.source === 'CC_CACHE_FILE' ? 'the application environment' : 'the application',
    fix:
      vcl.problem === 'missing'
        ? `Add the file to the project, or unset CC_CACHE_FILE (the file ${CACHE_VCL} also activates the cache).`
        : `Point ${vcl.source} at a Varnish VCL file that is part of the project (a real file, or a symlink to one inside the project).`,
  });
}

function checkCustomCommand(env: NodeJS.ProcessEnv, items: string[]): void {
  const cmd = rawSetting(env, 'CC_REQUEST_FLOW_CUSTOM');
  if (!items.includes('custom') || !cmd) return;
  const missing = ['@@LISTEN_PORT@@', '@@FORWARD_PORT@@'].filter((p) => !cmd.includes(p));
  if (missing.length) {
    throw new UserError({
      id: 'request-flow/custom/placeholders',
      title: 'The custom middleware command lacks a placeholder',
      seen: { what: 'CC_REQUEST_FLOW_CUSTOM', value: redactUrl(cmd), where: WHERE },
      rule: 'The custom middleware listens on @@LISTEN_PORT@@ and forwards to @@FORWARD_PORT@@; the launcher replaces both with the ports it allocates.',
      fix: `Add ${missing.join(' and ')} to the command, e.g. my-proxy --listen @@LISTEN_PORT@@ --to 127.0.0.1:@@FORWARD_PORT@@.`,
    });
  }
}
