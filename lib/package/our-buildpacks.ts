/** Our three buildpacks: their names, rbp's automatic order, and where the built ones are. */
import fs from 'node:fs';
import path from 'node:path';
import { readDescriptor, type BuildpackRef } from '../cnb/descriptor.ts';
import { value } from '../config/read.ts';
import { UserError } from '../errors.ts';

export const RUNTIMES = ['node', 'static', 'phpserver'] as const;
export type Runtime = (typeof RUNTIMES)[number];

/**
 * node first: a package.json with something to start is the clearest statement of intent, and the
 * node buildpack declines a package.json with nothing to start (a generator project), which then
 * lands on static. static before phpserver: both accept a bare index.html, and a plain site is
 * static; phpserver then takes index.php apps.
 */
export const AUTO_ORDER: readonly Runtime[] = ['node', 'static', 'phpserver'];

let besideRbp: string | undefined;

/** Where our built buildpacks live: `dist/buildpacks/` beside the bundled CLI. */
export function ourBuildpacksDir(): string {
  const dir = value(process.env, 'RBP_BUILDPACKS_DIR');
  if (dir) return dir;
  // Found once; a folder not there yet is looked for again.
  if (besideRbp) return besideRbp;
  const here = import.meta.dirname;
  for (const candidate of [path.join(here, 'buildpacks'), path.resolve(here, '../../dist/buildpacks')]) {
    if (fs.existsSync(candidate)) return (besideRbp = candidate);
  }
  return path.join(here, 'buildpacks');
}

export function ourBuildpack(name: Runtime): BuildpackRef {
  const dir = path.join(ourBuildpacksDir(), name);
  if (!fs.existsSync(path.join(dir, 'buildpack.toml'))) {
    throw new UserError({
      id: 'platform/buildpack/not-built',
      title: `The ${name} buildpack is not built`,
      seen: { what: 'buildpack directory', value: dir },
      rule: 'rbp runs our buildpacks from dist/buildpacks/, which npm run build makes (or RBP_BUILDPACKS_DIR).',
      fix: 'Run npm run build in the runtime-buildpacks checkout, then try again.',
    });
  }
  return readDescriptor(dir);
}
