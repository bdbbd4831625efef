/**
 * Pushing OCI images to a registry (the OCI distribution API, as Distribution, Harbor, GHCR, ECR or
 * Docker Hub speak it): each blob is checked (HEAD), mounted from another repository of the same
 * registry that got it in this push, or uploaded (POST, then PUT with its digest); the manifest
 * goes last, so a push that fails leaves the tag on the image it named before.
 * Authentication answers the registry's challenge: Basic, or a Bearer token from its realm, with
 * the credentials of the Docker config file (registry-auth.ts).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { proxiedFetch } from '../deps/download.ts';
import { UserError } from '../errors.ts';
import { formatDuration, type Logger } from '../log.ts';
import { formatRef, registryHost, registryScheme, type ImageRef } from './image-ref.ts';
import { blobPath, DOCKER, readLayout, retype, type Descriptor, type MediaFamily } from './oci-layout.ts';
import { findCredentials, type FoundCredentials } from './registry-auth.ts';

export interface PushTarget {
  /** The OCI layout folder and the tag of the image in it. */
  layout: string;
  tag: string;
  ref: ImageRef;
  /**
   * The media types the registry gets (the same blobs): Docker's by default, those of the run images
   * and app images the reference lifecycle rebases (oci-layout.ts DOCKER); OCI's for buildpackages,
   * as pack publishes them.
   */
  family?: MediaFamily;
}

interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/** `Bearer realm="https://auth",service="registry",scope="…"` → its scheme and parameters. */
export function parseChallenge(header: string): Challenge {
  const space = header.indexOf(' ');
  const scheme = (space === -1 ? header : header.slice(0, space)).trim();
  const params: Record<string, string> = {};
  for (const m of header.slice(space + 1).matchAll(/(\w+)="([^"]*)"/g)) params[m[1]!.toLowerCase()] = m[2]!;
  return { scheme, params };
}

type Res = Awaited<ReturnType<typeof proxiedFetch>>;

function registryError(id: string, title: string, ref: string, rule: string, fix: string, details: string[] = []): UserError {
  return new UserError({ id, title, seen: { what: 'image', value: ref }, rule, fix, ...(details.length ? { details } : {}) });
}

/** The registry's own error text ({"errors":[{"code","message"}]}), when it sent one. */
async function registryMessage(res: Res): Promise<string | undefined> {
  try {
    const body = (await res.json()) as { errors?: { code?: string; message?: string }[] };
    const e = body.errors?.[0];
    return e ? `${e.code ?? ''}${e.message ? `: ${e.message}` : ''}` : undefined;
  } catch {
    return undefined;
  }
}

/** One registry: its base URL, the credentials found for it, and the authorization of each repository. */
class Registry {
  private readonly base: string;
  private readonly auth = new Map<string, string>();
  private creds?: FoundCredentials;
  /** Which repository of this registry already holds a blob (pushed or checked in this run). */
  readonly holders = new Map<string, string>();

  constructor(readonly name: string) {
    this.base = `${registryScheme(name)}://${registryHost(name)}`;
  }

  /** One request, authenticated on the registry's challenge (once), mapped to a clear error when it cannot be made. */
  async request(
    repo: string,
    ref: string,
    method: string,
    url: string,
    init: { headers?: Record<string, string>; body?: () => Readable | string; length?: number } = {},
  ): Promise<Res> {
    const full = url.startsWith('http') ? url : `${this.base}${url}`;
    const send = async () => {
      const headers: Record<string, string> = { ...init.headers };
      const a = this.auth.get(repo);
      if (a) headers.authorization = a;
      if (init.length !== undefined) headers['content-length'] = String(init.length);
      const body = init.body?.();
      try {
        return await proxiedFetch(full, { method, headers, ...(body !== undefined ? { body: body as never, duplex: 'half' } : {}), redirect: 'follow' });
      } catch (e) {
        const cause = (e as { cause?: { code?: string; message?: string } }).cause;
        throw registryError(
          'platform/registry/unreachable',
          `Cannot reach the registry ${this.name}`,
          ref,
          `The image is pushed to ${this.base}/v2/ (HTTPS, except for a registry on this machine: localhost or a loopback address); the connection failed: ${cause?.code ?? ''} ${cause?.message ?? (e as Error).message}`.trim(),
          'Check the registry name and port, that the registry is running, and the proxy settings (HTTPS_PROXY, NO_PROXY).',
        );
      }
    };
    let res = await send();
    if (res.status === 401 && !this.auth.has(repo)) {
      const challenge = res.headers.get('www-authenticate');
      await res.body?.cancel();
      if (challenge) await this.authenticate(repo, ref, parseChallenge(challenge));
      res = await send();
    }
    if (res.status === 401) {
      await res.body?.cancel();
      throw this.unauthorized(ref);
    }
    return res;
  }

  private unauthorized(ref: string): UserError {
    const c = this.creds;
    const had = c?.credentials
      ? `the credentials of ${c.source} in ${c.file} were refused`
      : `${c?.file ?? 'the Docker config file'} holds no credentials for ${this.name}`;
    return registryError(
      'platform/registry/unauthorized',
      `The registry ${this.name} needs credentials`,
      ref,
      `A push needs credentials the registry accepts, read from the Docker config file as pack reads it ($DOCKER_CONFIG/config.json, else ~/.docker/config.json); ${had}.`,
      `Log in (docker login ${this.name}, or podman login --authfile "$DOCKER_CONFIG/config.json" ${this.name}), or put an auths entry for ${this.name} in that file.`,
    );
  }

  private async authenticate(repo: string, ref: string, ch: Challenge): Promise<void> {
    const { credentials } = (this.creds ??= await findCredentials(this.name));
    const basic =
      credentials?.username !== undefined ? `Basic ${Buffer.from(`${credentials.username}:${credentials.password ?? ''}`).toString('base64')}` : undefined;
    if (ch.scheme.toLowerCase() === 'basic') {
      if (!basic) throw this.unauthorized(ref);
      this.auth.set(repo, basic);
      return;
    }
    if (ch.scheme.toLowerCase() !== 'bearer' || !ch.params.realm) throw this.unauthorized(ref);
    const url = new URL(ch.params.realm);
    if (ch.params.service) url.searchParams.set('service', ch.params.service);
    url.searchParams.set('scope', `repository:${repo}:pull,push`);
    let res: Res;
    try {
      res = credentials?.identityToken
        ? await proxiedFetch(url.origin + url.pathname, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({
              grant_type: 'refresh_token',
              refresh_token: credentials.identityToken,
              service: ch.params.service ?? '',
              scope: `repository:${repo}:pull,push`,
              client_id: 'rbp',
            }).toString(),
          })
        : await proxiedFetch(url.toString(), { headers: basic ? { authorization: basic } : {} });
    } catch (e) {
      throw registryError(
        'platform/registry/unreachable',
        `Cannot reach the token service of ${this.name}`,
        ref,
        `The registry sends clients for a token to ${url.origin}; the connection failed: ${(e as Error).message}`,
        'Check the network and the proxy settings (HTTPS_PROXY, NO_PROXY).',
      );
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw this.unauthorized(ref);
    }
    const body = (await res.json()) as { token?: string; access_token?: string };
    const token = body.token ?? body.access_token;
    if (!token) throw this.unauthorized(ref);
    this.auth.set(repo, `Bearer ${token}`);
  }
}

/** Refused: 403, a read-only registry's 405, and the registry's other answers, each in one error. */
async function refused(res: Res, ref: string, what: string): Promise<UserError> {
  const msg = await registryMessage(res);
  const detail = `${res.status} ${res.statusText}${msg ? ` (${msg})` : ''}`;
  if (res.status === 403 || res.status === 405) {
    return registryError(
      'platform/registry/denied',
      'The registry refused the push',
      ref,
      `The registry answered ${what} with ${detail}: the account may not push to this repository, or the registry takes no pushes (read-only).`,
      'Push to a repository your account may write to, or ask the registry administrator for push rights.',
    );
  }
  return registryError(
    'platform/registry/failed',
    'The push to the registry failed',
    ref,
    `The registry answered ${what} with ${detail}.`,
    "Try again; if it keeps failing, check the registry's logs.",
  );
}

/** Pushes images from OCI layouts; returns each manifest's digest. */
export async function pushImages(targets: PushTarget[], log: Logger): Promise<{ ref: string; digest: string }[]> {
  const registries = new Map<string, Registry>();
  const out: { ref: string; digest: string }[] = [];
  for (const t of targets) {
    const started = performance.now();
    const ref = formatRef(t.ref);
    const reg = registries.get(t.ref.registry) ?? new Registry(t.ref.registry);
    registries.set(t.ref.registry, reg);
    const image = readLayout(t.layout, t.tag);
    const repo = t.ref.repository;
    let sent = 0;
    let bytes = 0;
    for (const blob of [...image.manifest.layers, image.manifest.config]) {
      const r = await pushBlob(reg, repo, ref, t.layout, blob);
      if (r) {
        sent++;
        bytes += blob.size;
      }
    }
    const family = t.family ?? DOCKER;
    const manifest = Buffer.from(JSON.stringify(retype(image.manifest, family)));
    const res = await reg.request(repo, ref, 'PUT', `/v2/${repo}/manifests/${t.ref.tag ?? 'latest'}`, {
      headers: { 'content-type': family.manifest },
      body: () => Readable.from([manifest]),
      length: manifest.length,
    });
    if (res.status !== 201 && res.status !== 200) throw await refused(res, ref, 'the manifest');
    await res.body?.cancel();
    const digest = `sha256:${crypto.createHash('sha256').update(manifest).digest('hex')}`;
    const total = image.manifest.layers.length + 1;
    log.info(
      `pushed ${ref} (${digest.slice(0, 19)}…): ${sent} of ${total} blobs sent (${(bytes / 1e6).toFixed(1)} MB)${sent < total ? ', the others already there' : ''}, ${formatDuration(performance.now() - started)}`,
    );
    out.push({ ref, digest });
  }
  return out;
}

/** Makes the registry hold one blob in `repo`; true when its bytes were sent. */
async function pushBlob(reg: Registry, repo: string, ref: string, layout: string, d: Descriptor): Promise<boolean> {
  const head = await reg.request(repo, ref, 'HEAD', `/v2/${repo}/blobs/${d.digest}`);
  await head.body?.cancel();
  if (head.ok) {
    reg.holders.set(d.digest, repo);
    return false;
  }
  if (head.status !== 404) throw await refused(head, ref, `a blob check (HEAD ${d.digest.slice(0, 19)}…)`);
  const from = reg.holders.get(d.digest);
  const start = await reg.request(
    repo,
    ref,
    'POST',
    `/v2/${repo}/blobs/uploads/${from && from !== repo ? `?mount=${encodeURIComponent(d.digest)}&from=${encodeURIComponent(from)}` : ''}`,
  );
  if (start.status === 201) {
    await start.body?.cancel();
    reg.holders.set(d.digest, repo);
    return false;
  }
  if (start.status !== 202) throw await refused(start, ref, 'the start of an upload');
  await start.body?.cancel();
  const location = start.headers.get('location');
  if (!location) throw await refused(start, ref, 'the start of an upload (no Location)');
  const url = new URL(location, `${registryScheme(reg.name)}://${registryHost(reg.name)}`);
  url.searchParams.set('digest', d.digest);
  const file = blobPath(layout, d.digest);
  const put = await reg.request(repo, ref, 'PUT', url.toString(), {
    headers: { 'content-type': 'application/octet-stream' },
    body: () => fs.createReadStream(file),
    length: d.size,
  });
  if (put.status !== 201 && put.status !== 204) throw await refused(put, ref, `the upload of ${d.digest.slice(0, 19)}…`);
  await put.body?.cancel();
  reg.holders.set(d.digest, repo);
  return true;
}
