/** `<layers>/config/metadata.toml`, as the lifecycle's builder writes it: the processes and the buildpacks of a build. */
import path from 'node:path';
import { readTomlIfExists, writeToml } from './toml.ts';
import { UserError } from '../errors.ts';
import type { Label } from './launch.ts';

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

export const metadataPath = (out: string) => path.join(out, 'layers', 'config', 'metadata.toml');

/** A file of OUT that does not parse (or is not a file) is one clear error: OUT is damaged. */
export function readOutToml<T>(out: string, file: string): T | undefined {
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
