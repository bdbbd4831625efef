/** launch.toml (cnb-spec.md §6), read by the rules of the writer's Buildpack API (api.ts). */
import { apiAtLeast } from './api.ts';
import { readTomlIfExists, writeToml } from './toml.ts';

export interface ProcessDef {
  type: string;
  /** Since Buildpack API 0.9 an array (executable, then fixed arguments); before, one string, read as `[string]`. */
  command: string[];
  args?: string[];
  /** Before Buildpack API 0.9 only: false (the default then) runs the command with bash and profile scripts. */
  direct?: boolean;
  default?: boolean;
  'working-dir'?: string;
}

export interface Label {
  key: string;
  value: string;
}

export interface LaunchToml {
  labels?: Label[];
  processes?: ProcessDef[];
  slices?: { paths: string[] }[];
}

/**
 * A label our buildpacks set (rbp's own convention): the process types whose launch entrypoint
 * answers RBP_DRY_RUN=1 with its plan, which `rbp run --dry-run` then shows.
 */
export const DRY_RUN_LABEL = 'io.rbp.launch.dry-run';

const TYPE_RE = /^[A-Za-z0-9._-]+$/;

/**
 * Checks a launch.toml as the lifecycle decodes it for Buildpack API `api` (buildpack/files.go
 * DecodeLaunchTOML); before 0.9, a process's string command becomes `[command]` and `direct`
 * defaults to false. Returns the processes in that one shape.
 */
export function validateLaunch(launch: LaunchToml, where = 'launch.toml', api = '0.10'): LaunchToml {
  const seen = new Set<string>();
  let defaults = 0;
  const stringCommands = !apiAtLeast(api, '0.9');
  for (const p of launch.processes ?? []) {
    if (typeof p.type !== 'string' || !TYPE_RE.test(p.type)) throw new Error(`${where}: process type ${JSON.stringify(p.type)} must match ${TYPE_RE}`);
    if (seen.has(p.type)) throw new Error(`${where}: process type ${p.type} is defined twice`);
    seen.add(p.type);
    if (stringCommands) {
      const command = p.command as unknown;
      if (typeof command !== 'string') throw new Error(`${where}: process ${p.type}: command must be a string (Buildpack API ${api} < 0.9)`);
      if (p.direct !== undefined && typeof p.direct !== 'boolean') throw new Error(`${where}: process ${p.type}: direct must be true or false`);
      p.command = [command];
      p.direct = p.direct ?? false;
    } else {
      if (!Array.isArray(p.command) || p.command.length === 0 || p.command.some((c) => typeof c !== 'string'))
        throw new Error(`${where}: process ${p.type}: command must be a non-empty array of strings (Buildpack API >= 0.9)`);
      if ('direct' in p) throw new Error(`${where}: process ${p.type}: "direct" is not supported on this buildpack version (Buildpack API >= 0.9)`);
    }
    if (p.args !== undefined && (!Array.isArray(p.args) || p.args.some((a) => typeof a !== 'string')))
      throw new Error(`${where}: process ${p.type}: args must be an array of strings`);
    if (p.default) defaults++;
  }
  if (defaults > 1) throw new Error(`${where}: more than one process has default = true`);
  return launch;
}

export function writeLaunchToml(file: string, launch: LaunchToml): void {
  writeToml(file, validateLaunch(launch) as Record<string, unknown>);
}

export function readLaunchToml(file: string, api = '0.10'): LaunchToml | undefined {
  const t = readTomlIfExists<LaunchToml>(file);
  return t && validateLaunch(t, file, api);
}
