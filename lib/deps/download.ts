/**
 * Reading artifacts and small documents from http(s) URLs or local paths, with retries and timeouts.
 * A failure the user can act on (unreachable host, 404, a missing mirror file) ends as the UserError
 * `deps/download-failed`, naming the URL with its credentials hidden.
 *
 * Requests go through undici's EnvHttpProxyAgent: `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` (or their
 * lower-case forms) are honoured as curl does. A download still running after a second gets a
 * progress line, then one every few seconds (the log is usually a pipe, not a terminal).
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Transform } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import tls, { type SecureContext } from 'node:tls';
import type { EnvHttpProxyAgent } from 'undici';
import { deferredExtraCa } from '../cnb/extra-ca.ts';
import { writeFailureCode } from '../disk.ts';
import { UserError } from '../errors.ts';
import { formatDuration, type Logger } from '../log.ts';
import { hashingStream, type Checksum, type ChecksumAlgorithm } from './checksum.ts';
import { parseLocation, redact, requestOf } from './url.ts';

export interface NetworkOptions {
  /** Attempts for network errors and 5xx responses (default 3). */
  attempts?: number;
  /** Pause after the first failed attempt; doubles after each (default 500ms). */
  backoffMs?: number;
  /** Limit for one attempt, transfer included (default 10 min for artifacts, 30 s for documents). */
  timeoutMs?: number;
}

export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    statusText: string,
  ) {
    super(`HTTP ${status}${statusText ? ` ${statusText}` : ''}`);
    this.name = 'HttpStatusError';
  }
}

/** Network errors and 5xx are worth another attempt; 4xx, missing files and user errors are not. */
export function isRetryable(e: unknown): boolean {
  if (e instanceof HttpStatusError) return e.status >= 500;
  if (!(e instanceof Error)) return false;
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return true;
  // undici reports connection failures as TypeError("fetch failed" | "terminated") with a cause.
  if (e instanceof TypeError && (e.cause !== undefined || e.message === 'fetch failed' || e.message === 'terminated')) return true;
  const code = (e as NodeJS.ErrnoException).code;
  return typeof code === 'string' && /^(ECONN|ETIMEDOUT|EPIPE|EAI_AGAIN|ENOTFOUND|ENETUNREACH|EHOSTUNREACH|UND_ERR)/.test(code);
}

/** One line for the cause of a failure, with undici's nested cause (`ECONNREFUSED`) spelled out. */
export function describeError(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = e.cause as { code?: string; message?: string } | undefined;
  const extra = cause ? `: ${cause.code ?? cause.message ?? String(e.cause)}` : '';
  return redact(`${e.message}${extra}`);
}

/** Runs `fn` up to `attempts` times while it fails with a retryable error, backing off exponentially. */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, opts: NetworkOptions & { log?: Logger } = {}): Promise<T> {
  const attempts = opts.attempts ?? 3;
  const backoff = opts.backoffMs ?? 500;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (e) {
      if (attempt >= attempts || !isRetryable(e)) throw e;
      const wait = backoff * 2 ** (attempt - 1);
      opts.log?.detail(`attempt ${attempt} of ${attempts} failed (${describeError(e)}); retrying in ${wait}ms`);
      await sleep(wait);
    }
  }
}

function isNotFound(e: unknown): boolean {
  return (e instanceof HttpStatusError && e.status === 404) || (e as NodeJS.ErrnoException | null | undefined)?.code === 'ENOENT';
}

const PROXY_VARS = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'] as const;
let agent: { key: string; secureContext: SecureContext | undefined; dispatcher: EnvHttpProxyAgent } | undefined;

/** undici, loaded on the first request: a build that reuses every tool makes none. */
let undici: Promise<typeof import('undici')> | undefined;
const loadUndici = () => (undici ??= import('undici'));

let trust: { file: string; context: SecureContext | undefined } | undefined;

/**
 * The TLS context of our requests when a bootstrap deferred NODE_EXTRA_CA_CERTS (lib/cnb/extra-ca.ts):
 * Node.js's root certificates and the file's, read once. Undefined otherwise: Node.js's default,
 * which has them already. A file that cannot be read is ignored with Node.js's own warning, as
 * Node.js does at its start.
 */
function trustContext(): SecureContext | undefined {
  const file = deferredExtraCa();
  if (!file) return undefined;
  if (trust?.file !== file) {
    let context: SecureContext | undefined;
    try {
      context = tls.createSecureContext({ ca: [...tls.rootCertificates, fs.readFileSync(file, 'utf8')] });
    } catch (e) {
      process.emitWarning(`Ignoring extra certs from \`${file}\`, load failed: ${(e as Error).message}`);
    }
    trust = { file, context };
  }
  return trust.context;
}

/**
 * The proxy settings as seen now (one agent per setting: tests and long-lived processes may change
 * them), with the trust of a deferred NODE_EXTRA_CA_CERTS (lib/cnb/extra-ca.ts) for the server and the proxy.
 */
async function dispatcher(): Promise<EnvHttpProxyAgent> {
  const { EnvHttpProxyAgent } = await loadUndici();
  const secureContext = trustContext();
  const key = PROXY_VARS.map((k) => process.env[k] ?? '').join('\0');
  if (agent?.key !== key || agent.secureContext !== secureContext) {
    const tlsOptions = secureContext ? { connect: { secureContext }, requestTls: { secureContext }, proxyTls: { secureContext } } : {};
    agent = { key, secureContext, dispatcher: new EnvHttpProxyAgent(tlsOptions) };
  }
  return agent.dispatcher;
}

/**
 * A request with the same proxy and trust settings as downloads (the registry client's):
 * undici's fetch through the shared dispatcher.
 */
export async function proxiedFetch(url: string, init: Omit<import('undici').RequestInit, 'dispatcher'>): Promise<import('undici').Response> {
  const { fetch: undiciFetch } = await loadUndici();
  return undiciFetch(url, { ...init, dispatcher: await dispatcher() });
}

/** Which proxy a URL goes through, for the verbose log (credentials hidden); undefined for none. */
export function proxyFor(url: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const u = new URL(url);
  const noProxy = (env.no_proxy ?? env.NO_PROXY ?? '').split(/[\s,]+/).filter(Boolean);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (noProxy.some((p) => p === '*' || host === p.replace(/^\*?\.?/, '') || host.endsWith(`.${p.replace(/^\*?\.?/, '')}`))) return undefined;
  const proxy = u.protocol === 'https:' ? (env.https_proxy ?? env.HTTPS_PROXY ?? env.http_proxy ?? env.HTTP_PROXY) : (env.http_proxy ?? env.HTTP_PROXY);
  return proxy ? redact(proxy) : undefined;
}

interface Opened {
  stream: Readable;
  /** Content-Length, when the server said. */
  total?: number;
}

/** Opens one attempt at reading `ref` as a stream. */
async function open(ref: string, timeoutMs: number, accept?: string, log?: Logger): Promise<Opened> {
  const loc = parseLocation(ref);
  if (loc.kind === 'file') {
    await fsp.access(loc.path, fs.constants.R_OK);
    return { stream: fs.createReadStream(loc.path), total: (await fsp.stat(loc.path)).size };
  }
  const req = requestOf(loc.url);
  const via = proxyFor(req.url);
  log?.debug(`GET ${redact(req.url)}${via ? ` via proxy ${via}` : ''}`);
  const { fetch: undiciFetch } = await loadUndici();
  const res = await undiciFetch(req.url, {
    headers: { ...req.headers, ...(accept ? { accept } : {}) },
    redirect: 'follow',
    signal: AbortSignal.timeout(timeoutMs),
    dispatcher: await dispatcher(),
  });
  if (!res.ok || !res.body) {
    await res.body?.cancel();
    throw new HttpStatusError(res.status, res.statusText);
  }
  const length = Number(res.headers.get('content-length'));
  return { stream: Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), ...(length > 0 ? { total: length } : {}) };
}

function mib(n: number): string {
  return `${(n / 2 ** 20).toFixed(1)} MiB`;
}

/**
 * Counts the bytes going through; when the transfer has taken more than `firstMs`, logs a progress
 * line, then one every `everyMs`, and a closing line when it ends.
 */
export function progressStream(what: string, total: number | undefined, log: Logger | undefined, firstMs = 1000, everyMs = 5000): Transform {
  let bytes = 0;
  let shown = false;
  const t0 = performance.now();
  // On a terminal the live line shows the bytes as they come; elsewhere a line every few seconds.
  const activity = log?.live ? log.track(what) : undefined;
  const now = () => {
    const secs = (performance.now() - t0) / 1000;
    const rate = secs > 0 ? ` at ${mib(bytes / secs)}/s` : '';
    return `${mib(bytes)}${total ? ` of ${mib(total)} (${Math.floor((bytes / total) * 100)}%)` : ''}${rate}`;
  };
  const report = () => {
    shown = true;
    if (activity) activity.progress(now());
    else log?.detail(`${what}: ${now()}`);
  };
  let timer: NodeJS.Timeout | undefined = log
    ? setTimeout(
        function tick() {
          report();
          timer = setTimeout(tick, activity ? 250 : everyMs);
          timer.unref();
        },
        activity ? 0 : firstMs,
      )
    : undefined;
  timer?.unref();
  const stop = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    activity?.end();
  };
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      bytes += chunk.length;
      cb(null, chunk);
    },
    flush(cb) {
      stop();
      if (shown) log?.detail(`${what}: ${mib(bytes)} in ${formatDuration(performance.now() - t0)}`);
      cb();
    },
    destroy(err, cb) {
      stop();
      cb(err);
    },
  });
}

function downloadFailed(what: string, ref: string, e: unknown, fix?: string): UserError {
  return new UserError({
    id: 'deps/download-failed',
    title: `Could not download ${what}`,
    seen: { what: 'URL', value: redact(ref) },
    rule: 'tools are downloaded with up to 3 attempts; network errors and 5xx responses are retried, other responses are not',
    fix: fix ?? 'check that this machine can reach the URL, or set RBP_DEPENDENCY_MIRROR to a mirror holding the file',
    details: [describeError(e)],
  });
}

export interface TextRequest extends NetworkOptions {
  /** For the error title: `the checksum file of caddy 2.11.2`. */
  what: string;
  accept?: string;
  /** A 404 or a missing file gives undefined instead of an error. */
  optional?: boolean;
  log?: Logger;
  fix?: string;
}

/** Reads a small document (JSON, a checksum file) from a URL or path. */
export async function fetchText(ref: string, req: TextRequest): Promise<string | undefined> {
  try {
    return await withRetry(async () => {
      const { stream } = await open(ref, req.timeoutMs ?? 30_000, req.accept, req.log);
      return Buffer.concat((await stream.toArray()) as Uint8Array[]).toString('utf8');
    }, req);
  } catch (e) {
    if (req.optional && isNotFound(e)) return undefined;
    throw downloadFailed(req.what, ref, e, req.fix);
  }
}

export interface FileRequest extends NetworkOptions {
  what: string;
  /** Digests to compute while the bytes stream to disk. */
  algorithms: Iterable<ChecksumAlgorithm>;
  log?: Logger;
  fix?: string;
}

/**
 * Streams `ref` into the file `to`, hashing on the way, and returns the digests. A failed download
 * leaves no file behind. A failed write (writeFailureCode) is thrown as it is, with `total`: the
 * download's size when the server said it.
 */
export async function downloadFile(ref: string, to: string, req: FileRequest): Promise<{ digests: Checksum[]; bytes: number }> {
  const algorithms = [...req.algorithms];
  let total: number | undefined;
  try {
    return await withRetry(async () => {
      const source = await open(ref, req.timeoutMs ?? 600_000, undefined, req.log);
      total = source.total;
      const hash = hashingStream(algorithms);
      await pipeline(source.stream, progressStream(`downloading ${req.what}`, source.total, req.log), hash.stream, fs.createWriteStream(to));
      return { digests: hash.digests(), bytes: fs.statSync(to).size };
    }, req);
  } catch (e) {
    fs.rmSync(to, { force: true });
    // The disk's fault, not the network's: the caller names the folder (lib/disk.ts), with the download's size.
    if (writeFailureCode(e)) throw Object.assign(e as Error, { total });
    throw downloadFailed(req.what, ref, e, req.fix);
  }
}
