/**
 * What the build decided for the launch (runtime version, server, webroot), kept in the launcher
 * layer's metadata and, since an app image holds layer folders and not their .toml, in the layer
 * itself: install.ts writes it at build, the planner reads it back at launch. Paths in it are
 * relative (to the buildpack's layers folder, or to the app) unless they are the operator's own.
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

/** The launcher layer the planner runs from (plan.cjs sits at its root). */
export function launcherLayer(): string {
  return path.dirname(process.argv[1] ?? __filename);
}

/** What the build decided, from the launcher layer the planner was copied into. */
export function readDecision<T extends LaunchDecision>(): T {
  const layerDir = launcherLayer();
  const t = readTomlIfExists<{ metadata?: T }>(path.join(layerDir, DECISION_FILE));
  if (!t?.metadata) {
    throw new UserError({
      id: 'launch/decision/missing',
      title: 'The launch entrypoint has no build metadata',
      seen: { what: 'launch decision', value: path.join(layerDir, DECISION_FILE) },
      rule: 'The launch planner runs from the launcher layer its buildpack wrote at build; that layer records what the build decided.',
      fix: 'Start the app through its launch process (rbp run OUT, or the image entrypoint), after a build with the buildpack.',
    });
  }
  return t.metadata;
}

/**
 * A file for the decision: relative to the buildpack's layers folder when it is inside (the planner
 * resolves it against the layers it finds), else as it is (the operator's own, at the same path at
 * launch). The launcher layer then names no folder of the build.
 */
export function inLayers(layersDir: string, file: string): string {
  const rel = path.relative(layersDir, file);
  return rel.startsWith('..') || path.isAbsolute(rel) ? file : rel;
}
