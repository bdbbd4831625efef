/**
 * RBP_DEPENDENCY_MIRROR: a base URL (`https://…`) or a local directory (path or `file://`) laid out as
 * `<mirror>/<id>/<version>/<file name of the upstream uri>`, with an optional `<file>.sha256` beside
 * each file. When it is set, tools come from the mirror only: an offline build never falls back to
 * the internet behind the operator's back.
 */
import fs from 'node:fs';
import { raw } from '../config/read.ts';
import { UserError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { DependencySpec } from './catalog.ts';
import { parseChecksumFile, type Checksum } from './checksum.ts';
import { fetchText, type NetworkOptions } from './download.ts';
import { fileNameOf, joinRef, parseLocation, redact, withSuffix } from './url.ts';

export const MIRROR_VARIABLE = 'RBP_DEPENDENCY_MIRROR';

export interface Mirror {
  kind: 'http' | 'file';
  /** The URL or absolute directory. */
  base: string;
}

function invalid(value: string, problem: string): UserError {
  return new UserError({
    id: 'deps/mirror-invalid',
    title: `${MIRROR_VARIABLE} is not a usable mirror`,
    seen: { what: MIRROR_VARIABLE, value: redact(value), where: 'the operator configuration' },
    rule: `${MIRROR_VARIABLE} is an https:// or http:// base URL, a file:// URL or a local directory`,
    fix: `set ${MIRROR_VARIABLE} to a URL or an existing directory laid out as <id>/<version>/<file>`,
    details: [problem],
  });
}

/** The mirror the operator configured, if any. A local directory must exist. */
export function mirrorFromEnv(env: Record<string, string | undefined>): Mirror | undefined {
  const value = raw(env, MIRROR_VARIABLE);
  if (!value) return undefined;
  let loc;
  try {
    loc = parseLocation(value);
  } catch (e) {
    throw invalid(value, (e as Error).message);
  }
  if (loc.kind === 'http') return { kind: 'http', base: loc.url };
  if (!fs.statSync(loc.path, { throwIfNoEntry: false })?.isDirectory()) throw invalid(value, `${loc.path} is not a directory`);
  return { kind: 'file', base: loc.path };
}

/** Where the mirror holds the artifact of `spec`. */
export function mirrorRef(mirror: Mirror, spec: Pick<DependencySpec, 'id' | 'version' | 'uri'>): string {
  return joinRef(mirror.base, spec.id, spec.version, fileNameOf(spec.uri));
}

/** The checksum the mirror keeps beside an artifact (`<file>.sha256`), if it keeps one. */
export async function mirrorChecksum(ref: string, net: NetworkOptions & { log?: Logger } = {}): Promise<Checksum | undefined> {
  const sumRef = withSuffix(ref, '.sha256');
  const text = await fetchText(sumRef, { ...net, what: 'a checksum from the mirror', optional: true });
  if (text === undefined) return undefined;
  const c = parseChecksumFile(text, fileNameOf(ref), 'the mirror');
  if (c?.algorithm !== 'sha256') {
    throw new UserError({
      id: 'deps/mirror-checksum-invalid',
      title: 'The mirror holds a checksum file that cannot be read',
      seen: { what: 'checksum file', value: redact(sumRef) },
      rule: 'a mirror checksum file holds a sha256 digest, alone or as `<hex>  <file name>`',
      fix: `write the file with: sha256sum ${fileNameOf(ref)} > ${fileNameOf(ref)}.sha256`,
    });
  }
  return c;
}
