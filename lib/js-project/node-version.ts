/**
 * Which Node.js version to install (contract, node rule 6 and "Versioning"): `engines.node` (any
 * semver range) wins over CC_NODE_VERSION (`<major>`, `<major>.<minor>` or `<major>.<minor>.<patch>`);
 * with neither, the latest LTS the contract names. End-of-life lines still build, with a warning.
 */
import semver from 'semver';
import schedule from 'node-releases/data/release-schedule/release-schedule.json' with { type: 'json' };
import { value } from '../config/read.ts';
import { UserError } from '../errors.ts';
import type { ConstraintOrigin } from '../deps/resolve.ts';
/** The part of package.json the version decision reads. */
export interface EnginesField {
  engines?: { node?: string };
}

/** Contract, "Versioning": the latest LTS, with the npm it ships. */
export const DEFAULT_NODE_VERSION = '24.15.0';
export const DEFAULT_NPM_VERSION = '11.12.1';

export type NodeVersionSource = 'engines.node' | 'CC_NODE_VERSION' | 'default';

export interface NodeConstraint {
  constraint: string;
  source: NodeVersionSource;
  origin: ConstraintOrigin;
  /** Set when CC_NODE_VERSION was given but engines.node took precedence. */
  ignored?: string;
}

export function nodeConstraint(pkg: EnginesField, env: Record<string, string | undefined>, pkgFile = 'package.json'): NodeConstraint {
  // lib/config checks the shape (<major>[.<minor>[.<patch>]]): a bad one is config/CC_NODE_VERSION/invalid.
  const fromEnv = value(env, 'CC_NODE_VERSION');
  const engines = pkg.engines?.node?.trim();
  if (engines) {
    if (semver.validRange(engines) === null) {
      throw new UserError({
        id: 'node/version/engines-invalid',
        title: 'engines.node in package.json is not a semver range',
        seen: { what: 'engines.node', value: engines, where: pkgFile },
        rule: 'engines.node is a semver range: 24, 24.x, ^22.12, >=20 <25, 24.15.0…',
        fix: 'Write engines.node as a semver range, e.g. "engines": { "node": "24.x" }.',
      });
    }
    return {
      constraint: engines,
      source: 'engines.node',
      origin: { what: 'engines.node', where: pkgFile },
      ...(fromEnv ? { ignored: fromEnv } : {}),
    };
  }
  if (fromEnv) return { constraint: fromEnv, source: 'CC_NODE_VERSION', origin: { what: 'CC_NODE_VERSION', where: 'the application environment' } };
  return { constraint: DEFAULT_NODE_VERSION, source: 'default', origin: { what: 'default Node.js version (latest LTS)' } };
}

/** The release line's end of life, from the Node.js release schedule (node-releases). */
export function endOfLife(version: string, today: Date = new Date()): { eol: boolean; end?: string } {
  const entry = (schedule as Record<string, { end: string }>)[`v${semver.major(version)}`];
  if (!entry) return { eol: false };
  return { eol: new Date(`${entry.end}T23:59:59Z`).getTime() < today.getTime(), end: entry.end };
}
