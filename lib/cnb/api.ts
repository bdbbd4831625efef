/**
 * Buildpack API versions, as the reference lifecycle (v0.20.8) reads and compares them
 * (lifecycle api/version.go, api/apis.go): `<major>.<minor>`, `<major>` or a `v` in front; 0.x
 * versions are supported one by one (no 0.x is a superset of another), and the lifecycle supports
 * 0.7 to 0.11. What each version changes for a buildpack is decided here, in one place:
 *
 *   0.8   CNB_PLATFORM_DIR, CNB_BUILD_PLAN_PATH (detect), CNB_BP_PLAN_PATH, CNB_LAYERS_DIR (build);
 *         a process's working-dir (0.7: ignored, with a warning)
 *   0.9   launch.toml `command` is an array and processes are direct (0.7, 0.8: a string, `direct`
 *         defaults to false: bash with profile scripts); user arguments replace `args` (before:
 *         appended)
 *   0.10  CNB_TARGET_* for detect and build
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.ts';
import { lineOf, type BuildpackRef } from './descriptor.ts';
import { EXIT, PhaseFailure } from './exit.ts';

export interface ApiVersion {
  major: number;
  minor: number;
}

/** The Buildpack APIs rbp runs: those of the reference lifecycle it follows. */
export const SUPPORTED_BUILDPACK_APIS = ['0.7', '0.8', '0.9', '0.10', '0.11'] as const;

const VERSION_RE = /^v?(\d+)\.?(\d*)$/;

/** The version an `api` string names, or undefined when the lifecycle could not parse it either. */
export function parseApi(text: unknown): ApiVersion | undefined {
  if (typeof text !== 'string') return undefined;
  const m = VERSION_RE.exec(text);
  if (!m) return undefined;
  return { major: Number(m[1]), minor: m[2] ? Number(m[2]) : 0 };
}

function compare(a: ApiVersion, b: ApiVersion): number {
  return a.major !== b.major ? a.major - b.major : a.minor - b.minor;
}

/** Whether the lifecycle supports this Buildpack API (a 1.x would also accept 1.y with y ≤ x). */
export function isSupportedApi(text: unknown): boolean {
  const v = parseApi(text);
  if (!v) return false;
  return SUPPORTED_BUILDPACK_APIS.some((s) => {
    const sv = parseApi(s)!;
    return sv.major === 0 ? compare(sv, v) === 0 : sv.major === v.major && sv.minor >= v.minor;
  });
}

/**
 * `api >= min`. An api that does not parse counts as the newest rules: rbp refuses such a
 * buildpack before running it (detect.ts), so this only matters for our own, which are 0.10.
 */
export function apiAtLeast(api: string | undefined, min: string): boolean {
  const v = parseApi(api);
  return v ? compare(v, parseApi(min)!) >= 0 : true;
}

/**
 * The lifecycle's check of a buildpack's API (cmd/apis.go VerifyBuildpackAPI): an api it does not
 * parse or does not support stops the phase with exit 12, before any buildpack runs. The error
 * names the file and the line of `api`.
 */
export function verifyBuildpackApi(ref: BuildpackRef): void {
  const api = ref.descriptor.api;
  if (isSupportedApi(api)) return;
  const file = path.join(ref.dir, 'buildpack.toml');
  let line: number | undefined;
  try {
    line = lineOf(fs.readFileSync(file, 'utf8'), '', 'api');
  } catch {
    line = undefined;
  }
  const { id, version } = ref.descriptor.buildpack;
  const e = new UserError({
    id: 'platform/buildpack/api-unsupported',
    title: api === undefined ? `Buildpack ${id}@${version} names no Buildpack API` : `Buildpack ${id}@${version} asks for a Buildpack API rbp does not run`,
    seen: {
      what: api === undefined ? 'api (missing)' : parseApi(api) ? 'api' : 'api (not a version)',
      ...(api !== undefined ? { value: api } : {}),
      where: `${file}${line ? `:${line}` : ''}`,
    },
    rule: `rbp runs the Buildpack APIs the reference lifecycle 0.20.8 supports: ${SUPPORTED_BUILDPACK_APIS.join(', ')} (api = "<major>.<minor>" at the top of buildpack.toml).`,
    fix: `Use a version of ${id} written for one of these APIs, or set api to the one it follows.`,
  });
  throw new PhaseFailure(EXIT.buildpackApi, e.message, e);
}
