/**
 * Versions a rule resolves from a registry at build time: a range (engines.node "22.x",
 * CC_NODE_VERSION=20, pnpm "10") has the newest version the registry serves for its answer, and
 * the registry moves that answer with every release it publishes. A snapshot records the rule's
 * decision instead, `<newest Node.js 22.x the registry serves>`, and the test checks the build took
 * exactly that version by asking the same registry now. A version a rule pins (the contract's
 * Node.js 24.15.0, a fixture's packageManager) is never resolved this way and stays as it is.
 */
import semver from 'semver';

/** What the build logs for each version it resolves (lib/js-project/node-tools.ts). */
const RESOLVE_LINE = /resolve (.+?) "([^"]+)" from the registry \(([^)]+)\)/g;

export interface Resolved {
  /** The version the registry serves for the range now. */
  version: string;
  /** The rule's decision, as the snapshot records it. */
  token: string;
}

const documents = new Map<string, Promise<string[]>>();

/** Every version of an npm package, from the registry the build asked (RBP_NPM_REGISTRY, else the public one). */
function versionsOf(pkg: string): Promise<string[]> {
  const registry = (process.env.RBP_NPM_REGISTRY ?? 'https://registry.npmjs.org').replace(/\/+$/, '');
  let doc = documents.get(pkg);
  if (!doc) {
    doc = fetch(`${registry}/${pkg.replace('/', '%2f')}`, { headers: { accept: 'application/vnd.npm.install-v1+json' } }).then(async (res) => {
      if (!res.ok) throw new Error(`${registry}/${pkg}: HTTP ${res.status}`);
      return Object.keys(((await res.json()) as { versions: Record<string, unknown> }).versions);
    });
    documents.set(pkg, doc);
  }
  return doc;
}

/** The versions a build resolved from a range, read from its log, each with the newest the registry serves for that range now. */
export async function registryResolved(log: string): Promise<Resolved[]> {
  const out: Resolved[] = [];
  for (const [, tool, constraint, pkg] of log.matchAll(RESOLVE_LINE)) {
    if (semver.valid(constraint)) continue; // an exact version: the rule's own answer
    const newest = semver.maxSatisfying(await versionsOf(pkg!), semver.validRange(constraint) ?? '*');
    if (!newest) throw new Error(`the registry serves no ${tool} for "${constraint}" (${pkg}), yet the build resolved one`);
    out.push({ version: newest, token: `<newest ${tool} ${constraint} the registry serves>` });
  }
  return out;
}

/** `text` with each resolved version named by its rule (whole versions only: 22.23.3, not 122.23.30). */
export function namingResolved(text: string, resolved: Resolved[]): string {
  let t = text;
  for (const r of resolved) t = t.replace(new RegExp(`(?<![\\d.])${r.version.replaceAll('.', '\\.')}(?![\\d.])`, 'g'), r.token);
  return t;
}
