/**
 * Where an artifact is read from (an http(s) URL or a local path) and how a URL may be shown.
 * Credentials ride in URLs (`https://user:token@mirror`), so every URL that reaches a log, an error
 * or layer metadata goes through `redact` first.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { redactUrl } from '../errors.ts';

export type Location = { kind: 'http'; url: string } | { kind: 'file'; path: string };

/** `https://…`/`http://…`, `file://…` or a filesystem path; other schemes are refused. */
export function parseLocation(ref: string): Location {
  if (/^https?:\/\//i.test(ref)) return { kind: 'http', url: ref };
  if (/^file:\/\//i.test(ref)) return { kind: 'file', path: fileURLToPath(ref) };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(ref)) throw new Error(`unsupported URL scheme in ${redact(ref)}: use https://, http://, file:// or a path`);
  return { kind: 'file', path: path.resolve(ref) };
}

/** Hides credentials in every URL in `text` (lib/errors.ts redactUrl). */
export const redact = redactUrl;

/**
 * fetch() refuses URLs that carry credentials: they move to an Authorization header. fetch drops that
 * header on a cross-origin redirect, so a mirror's password never reaches the host it redirects to.
 */
export function requestOf(url: string): { url: string; headers: Record<string, string> } {
  const u = new URL(url);
  if (!u.username && !u.password) return { url, headers: {} };
  const user = decodeURIComponent(u.username);
  const pass = decodeURIComponent(u.password);
  u.username = '';
  u.password = '';
  return { url: u.toString(), headers: { authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` } };
}

/** The file name an artifact is published under: the last path segment, without query or fragment. */
export function fileNameOf(ref: string): string {
  const loc = parseLocation(ref);
  if (loc.kind === 'file') return path.basename(loc.path);
  const segments = new URL(loc.url).pathname.split('/').filter(Boolean);
  return decodeURIComponent(segments.at(-1) ?? '');
}

/** Joins path segments onto a base URL or directory, keeping the base's own path. */
export function joinRef(base: string, ...segments: string[]): string {
  const loc = parseLocation(base);
  if (loc.kind === 'file') return path.join(loc.path, ...segments);
  const u = new URL(loc.url);
  u.pathname = [u.pathname.replace(/\/+$/, ''), ...segments.map(encodeURIComponent)].join('/');
  return u.toString();
}

/** `ref` with `suffix` appended to its file name (`x.tar.gz` → `x.tar.gz.sha256`), keeping a URL's query. */
export function withSuffix(ref: string, suffix: string): string {
  const loc = parseLocation(ref);
  if (loc.kind === 'file') return `${loc.path}${suffix}`;
  const u = new URL(loc.url);
  u.pathname += suffix;
  return u.toString();
}
