/**
 * Image references, read with the OCI distribution grammar (distribution/reference):
 *   [registry[:port]/]path[:tag][@sha256:digest]
 * The first component is the registry when it holds a `.` or a `:`, or is `localhost`; otherwise
 * the image is on Docker Hub (`docker.io`, `library/` before a one-component path), as Docker and
 * go-containerregistry (pack, kpack, the lifecycle) read it.
 */
import { UserError } from '../errors.ts';

export interface ImageRef {
  /** `docker.io`, `registry.example:5000`, `localhost:5000`. */
  registry: string;
  /** `library/node`, `team/rbp-run`. */
  repository: string;
  tag?: string;
  digest?: string;
}

const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = new RegExp(`^(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?$`);
const PATH = new RegExp(`^${COMPONENT}(?:/${COMPONENT})*$`);
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;

function invalid(what: string, text: string, problem: string): UserError {
  return new UserError({
    id: 'platform/image-name/invalid',
    title: 'Invalid image name',
    seen: { what, value: text },
    rule: `An image name follows the OCI reference grammar, [REGISTRY[:PORT]/]PATH[:TAG][@sha256:DIGEST]: PATH is lower-case letters, digits and . _ - separated by /, a tag at most 128 characters of letters, digits, _ . -; here ${problem}.`,
    fix: 'Give a name such as registry.example.com/team/app:1.0 or localhost:5000/app.',
  });
}

/** Parses `text` (given as `what`: a flag) or throws one clear user error. */
export function parseImageRef(text: string, what: string, opts: { push?: boolean } = {}): ImageRef {
  let rest = text.trim();
  if (!rest) throw invalid(what, text, 'the name is empty');
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at !== -1) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw invalid(what, text, `"${digest}" is not a sha256 digest`);
    if (opts.push) throw invalid(what, text, 'an image is pushed to a tag, not to a digest (@sha256:…)');
  }
  let tag: string | undefined;
  const slash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > slash) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) throw invalid(what, text, `"${tag}" is not a valid tag`);
  }
  const first = rest.split('/')[0]!;
  const hasRegistry = rest.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  const registry = hasRegistry ? first : 'docker.io';
  let repository = hasRegistry ? rest.slice(first.length + 1) : rest;
  if (hasRegistry && !DOMAIN.test(registry)) throw invalid(what, text, `"${registry}" is not a registry host[:port]`);
  if (!PATH.test(repository)) throw invalid(what, text, `"${repository}" is not a valid repository path (lower case only)`);
  if (registry === 'docker.io' && !repository.includes('/')) repository = `library/${repository}`;
  if (`${registry}/${repository}`.length > 255) throw invalid(what, text, 'the name is longer than 255 characters');
  return { registry, repository, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}) };
}

/** The reference as text: `registry/repository:tag` (`latest` when none), or `@digest`. */
export function formatRef(r: ImageRef): string {
  return `${r.registry}/${r.repository}${r.digest ? `@${r.digest}` : `:${r.tag ?? 'latest'}`}`;
}

/** An image beside `r` in the same registry and namespace: `<repository><suffix>:<tag>`. */
export function sibling(r: ImageRef, suffix: string, tag?: string): ImageRef {
  return { registry: r.registry, repository: `${r.repository}${suffix}`, tag: tag ?? r.tag ?? 'latest' };
}

/** Where the registry's API answers: Docker Hub's is registry-1.docker.io. */
export function registryHost(registry: string): string {
  return registry === 'docker.io' || registry === 'index.docker.io' ? 'registry-1.docker.io' : registry;
}

/**
 * A registry on this machine is spoken to over plain HTTP, as go-containerregistry does for
 * localhost and loopback addresses (a local test registry has no certificate); any other over HTTPS.
 */
export function registryScheme(registry: string): 'http' | 'https' {
  const host = registry.replace(/:[0-9]+$/, '');
  return host === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '[::1]' ? 'http' : 'https';
}
