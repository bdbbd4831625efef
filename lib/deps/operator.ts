/**
 * RBP_TOOL_<NAME>=<path>: a tool the operator's build or run image already carries. It is used as is
 * (nothing is downloaded or checked against a checksum: the operator vouches for it), its version is
 * read from the tool itself and logged, and a version other than the contract's is only a warning.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { finished } from '../child-result.ts';
import { appendSbom } from '../cnb/sbom.ts';
import semver from 'semver';
import { raw } from '../config/read.ts';
import { UserError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { normalizeConstraint } from './resolve.ts';
import { isExecutableFile } from '../fsx.ts';

/** `static-web-server` → `RBP_TOOL_STATIC_WEB_SERVER`. */
export function operatorVariable(id: string): string {
  return `RBP_TOOL_${id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

export interface OperatorToolOptions {
  id: string;
  /** Where the tool, when found, is recorded as an SBOM component: `<layersDir>/<target>.sbom.cdx.json`. */
  sbom?: { layersDir: string; target: 'launch' | 'build' };
  env: Record<string, string | undefined>;
  log: Logger;
  /** Arguments that make the tool print its version: `['version']`, `['--version']`. */
  versionArgs: string[];
  /** Extracts the version from the output; group 1 if it has one. Default: the first x.y.z. */
  versionPattern?: RegExp;
  /** The version (or range) the contract asks for; another one is a warning. */
  expected?: string;
}

export interface OperatorTool {
  variable: string;
  path: string;
  /** Undefined when the tool did not print a version. */
  version: string | undefined;
}

/** Runs the tool to learn its version. */
export async function readToolVersion(file: string, args: string[], pattern = /\bv?(\d+\.\d+\.\d+)\b/): Promise<{ version?: string; output: string }> {
  const r = finished(await execa(file, args, { reject: false, all: true, timeout: 15_000, stdin: 'ignore' }));
  const output = r.all ?? '';
  const m = pattern.exec(output);
  const version = m ? (m[1] ?? m[0]) : undefined;
  return { ...(version ? { version } : {}), output: output.trim().split('\n')[0] ?? '' };
}

/** The operator's tool for `id`, or undefined when RBP_TOOL_<ID> is not set. */
export async function findOperatorTool(opts: OperatorToolOptions): Promise<OperatorTool | undefined> {
  const variable = operatorVariable(opts.id);
  const value = raw(opts.env, variable);
  if (!value) return undefined;
  const file = path.resolve(value);
  if (!isExecutableFile(file)) {
    throw new UserError({
      id: 'deps/operator-tool-missing',
      title: `${variable} does not point at an executable file`,
      seen: { what: variable, value, where: 'the operator configuration' },
      rule: `${variable} is the path of a ${opts.id} executable present in the build image`,
      fix: `install ${opts.id} at that path and make it executable, or unset ${variable} to let the buildpack install it`,
      details: [fs.existsSync(file) ? `${file} exists but is not an executable file` : `${file} does not exist`],
    });
  }
  const { version, output } = await readToolVersion(file, opts.versionArgs, opts.versionPattern);
  if (version === undefined) {
    opts.log.warn(
      `${variable}=${value}: could not read a version from \`${[value, ...opts.versionArgs].join(' ')}\` (${JSON.stringify(output)}); using it as is`,
    );
    recordInSbom(opts, file, undefined);
    return { variable, path: file, version: undefined };
  }
  opts.log.info(`using ${opts.id} ${version} from ${variable}=${value} (provided by the operator)`);
  if (opts.expected && !matches(version, opts.expected)) {
    opts.log.warn(`${variable}=${value} is ${opts.id} ${version}, not ${opts.expected} as the contract asks; using it as is`);
  }
  recordInSbom(opts, file, version);
  return { variable, path: file, version };
}

/** Not installed by a buildpack, yet part of what builds or runs the app: the SBOM names it. */
function recordInSbom(opts: OperatorToolOptions, file: string, version: string | undefined): void {
  if (!opts.sbom) return;
  appendSbom(opts.sbom.layersDir, opts.sbom.target, [
    {
      name: opts.id,
      ...(version ? { version } : {}),
      purl: `pkg:generic/${encodeURIComponent(opts.id)}${version ? `@${encodeURIComponent(version)}` : ''}`,
      properties: { 'rbp:source': 'operator', 'rbp:path': file, 'rbp:variable': operatorVariable(opts.id) },
    },
  ]);
}

function matches(version: string, expected: string): boolean {
  const range = semver.validRange(normalizeConstraint(expected));
  return range ? semver.satisfies(version, range) : version === expected;
}
