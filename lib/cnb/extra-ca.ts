/**
 * NODE_EXTRA_CA_CERTS, read when our first request needs it instead of at Node.js's start: Node.js
 * 20 parses that file at every start, though most builds make no request at all (every tool
 * reused). So the bootstraps (scripts/build.mjs) hand the variable over under DEFERRED_CA_CERTS
 * instead, and:
 * - `takeBackExtraCa`, the first thing a detect or build does, puts NODE_EXTRA_CA_CERTS back into the
 *   environment, so every process the buildpack starts (npm, composer, a build command) gets it as
 *   the lifecycle gave it;
 * - our own requests (lib/deps/download.ts, `trustContext`) trust Node.js's root certificates plus
 *   the file's, as Node.js would have: read once, when the first connection needs it.
 * Kept apart from download.ts (and from node:tls) because every detect and build loads it.
 */
/** Set by the bootstraps; never seen by anything but takeBackExtraCa. */
export const DEFERRED_CA_CERTS = '_RBP_DEFERRED_NODE_EXTRA_CA_CERTS';

let deferred: string | undefined;

/** Gives NODE_EXTRA_CA_CERTS back to `env` when a bootstrap deferred it, and remembers the file. */
export function takeBackExtraCa(env: NodeJS.ProcessEnv = process.env): void {
  const file = env[DEFERRED_CA_CERTS];
  if (file === undefined) return;
  delete env[DEFERRED_CA_CERTS];
  env.NODE_EXTRA_CA_CERTS ??= file;
  deferred = file || undefined;
}

/** The file of a deferred NODE_EXTRA_CA_CERTS, which our own requests must trust (download.ts). */
export function deferredExtraCa(): string | undefined {
  return deferred;
}
