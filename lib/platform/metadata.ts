/** `<OUT>/layers/config/metadata.toml` (lib/cnb/metadata.ts) and rbp's own `<OUT>/rbp.toml`: what the launcher reads. */
import path from 'node:path';
import { writeToml } from '../cnb/toml.ts';
import { readOutToml } from '../cnb/metadata.ts';

export { metadataPath, readLaunchMetadata, writeLaunchMetadata, type ExportedProcess, type LaunchMetadata } from '../cnb/metadata.ts';

/** What rbp remembers about a build that is not part of a CNB image: the task and the instance size. */
export interface RbpBuildInfo {
  app: string;
  instance: string;
  task?: string;
  'built-at': string;
  layers: { buildpack: string; name: string; state: string }[];
  /** Milliseconds per phase (detect, restore, build, export) of the build that made this OUT. */
  timings?: Record<string, number>;
  /** Names (never values) of the variables given with `rbp build --env`/--env-file: `rbp run` says which are missing. */
  'env-names'?: string[];
}

export const rbpInfoPath = (out: string) => path.join(out, 'rbp.toml');

export const readRbpInfo = (out: string): RbpBuildInfo | undefined => readOutToml<RbpBuildInfo>(out, rbpInfoPath(out));
export const writeRbpInfo = (out: string, info: RbpBuildInfo): void => writeToml(rbpInfoPath(out), info as unknown as Record<string, unknown>);
