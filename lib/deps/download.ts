/**
 * Reading artifacts and small documents from http(s) URLs or local paths, with retries and timeouts.
 * A failure the user can act on (unreachable host, 404, a missing mirror file) ends as the UserError
 * `deps/download-failed`, naming the URL with its credentials hidden.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { setTimeout as sleep } from 'node:timers/promises';
import { UserError } from '../errors.ts';
import type { Logger } from '../log.ts';
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
  const extra = cause ? `: ${cause.code ?? cause.message ?? String(cause)}` : '';
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
  return (e instanceof HttpStatusError && e.status === 404) || (e as NodeJS.ErrnoException)?.code === 'ENOENT';
}

/** Opens one attempt at reading `ref` as a stream. */
async function open(ref: string, timeoutMs: number, accept?: string): Promise<Readable> {
  const loc = parseLocation(ref);
  if (loc.kind === 'file') {
    await fsp.access(loc.path, fs.constants.R_OK);
    return fs.createReadStream(loc.path);
  }
  const req = requestOf(loc.url);
  const res = await fetch(req.url, {
    headers: { ...req.headers, ...(accept ? { accept } : {}) },
    redirect: 'follow',
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok || !res.body) {
    await res.body?.cancel();
    throw new HttpStatusError(res.status, res.statusText);
  }
  return Readable.fromWeb(res.body as WebReadableStream<Uint8Array>);
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
      const stream = await open(ref, req.timeoutMs ?? 30_000, req.accept);
      const chunks: Buffer[] = [];
      for await (const c of stream) chunks.push(Buffer.from(c as Uint8Array));
      return Buffer.concat(chunks).toString('utf8');
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
 * leaves no file behind.
 */
export async function downloadFile(ref: string, to: string, req: FileRequest): Promise<{ digests: Checksum[]; bytes: number }> {
  const algorithms = [...req.algorithms];
  try {
    return await withRetry(async () => {
      const source = await open(ref, req.timeoutMs ?? 600_000);
      const hash = hashingStream(algorithms);
      await pipeline(source, hash.stream, fs.createWriteStream(to));
      return { digests: hash.digests(), bytes: fs.statSync(to).size };
    }, req);
  } catch (e) {
    fs.rmSync(to, { force: true });
    throw downloadFailed(req.what, ref, e, req.fix);
  }
}
