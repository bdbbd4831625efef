/**
 * What the build decided for the launch (runtime version, server, webroot), kept in the launcher
 * layer's metadata and, since an app image holds layer folders and not their .toml, in the layer
 * itself: install.ts writes it at build, the launch entrypoint reads it back at run time.
 */
import path from 'node:path';
import type { Metadata } from '../cnb/layers.ts';
import { readTomlIfExists } from '../cnb/toml.ts';
import { UserError } from '../errors.ts';

export interface LaunchDecision extends Metadata {
  runtime: string;
}

/** Inside the launcher layer: what the build decided, as the layer's metadata also says. */
export const DECISION_FILE = 'decision.toml';

/** What the build decided, from the launcher layer this launch entrypoint was copied into. */
export function readDecision<T extends LaunchDecision>(): T {
  const layerDir = path.dirname(path.dirname(process.argv[1] ?? __filename));
  const t = readTomlIfExists<{ metadata?: T }>(path.join(layerDir, DECISION_FILE));
  if (!t?.metadata) {
    throw new UserError({
      id: 'launch/decision/missing',
      title: 'The launch entrypoint has no build metadata',
      seen: { what: 'launch decision', value: path.join(layerDir, DECISION_FILE) },
      rule: 'The launch entrypoint runs from the launcher layer its buildpack wrote at build; that layer records what the build decided.',
      fix: 'Start the app through its launch process (rbp run OUT, or the image entrypoint), after a build with the buildpack.',
    });
  }
  return t.metadata;
}
