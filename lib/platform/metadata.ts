/** `<OUT>/layers/config/metadata.toml` and rbp's own `<OUT>/rbp.toml`: what the launcher reads. */
import path from 'node:path';
import { readTomlIfExists, writeToml } from '../cnb/toml.ts';
import { UserError } from '../errors.ts';
import type { Label } from '../cnb/launch.ts';

export interface ExportedProcess {
  type: string;
  command: string[];
  /** Absent when launch.toml gave none (the lifecycle writes none then). */
  args?: string[];
  direct: boolean;
  'buildpack-id': string;
  'working-dir'?: string;
}

export interface LaunchMetadata {
  'buildpack-default-process-type'?: string;
  buildpacks: { id: string; version: string; api: string }[];
  processes: ExportedProcess[];
  labels?: Label[];
}

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

export const metadataPath = (out: string) => path.join(out, 'layers', 'config', 'metadata.toml');
export const rbpInfoPath = (out: string) => path.join(out, 'rbp.toml');

/** A file of OUT that does not parse (or is not a file) is one clear error: OUT is damaged. */
function readOutToml<T>(out: string, file: string): T | undefined {
  try {
    return readTomlIfExists<T>(file);
  } catch (e) {
    throw new UserError({
      id: 'platform/out/damaged',
      title: 'OUT is damaged',
      seen: { what: path.relative(out, file), where: file },
      rule: 'rbp run reads the files rbp build wrote into OUT; this one cannot be read.',
      fix: `Build again into ${out} (rbp build APP --out ${out}).`,
      details: [((e as Error).message.split('\n')[0] ?? '').slice(0, 200)],
    });
  }
}

export function readLaunchMetadata(out: string): LaunchMetadata | undefined {
  return readOutToml<LaunchMetadata>(out, metadataPath(out));
}

export function writeLaunchMetadata(out: string, md: LaunchMetadata): void {
  writeToml(metadataPath(out), md as unknown as Record<string, unknown>);
}

export function readRbpInfo(out: string): RbpBuildInfo | undefined {
  return readOutToml<RbpBuildInfo>(out, rbpInfoPath(out));
}

export function writeRbpInfo(out: string, info: RbpBuildInfo): void {
  writeToml(rbpInfoPath(out), info as unknown as Record<string, unknown>);
}
