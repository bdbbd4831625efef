/** What `--json` prints: one JSON document on stdout, the result of a command or its error. */
import path from 'node:path';
import type { Writable } from 'node:stream';
import { errorJson } from '../errors.ts';
import type { BuildResult } from './build.ts';

export function writeJson(out: Writable, value: unknown): void {
  out.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** `rbp build --json` (and the first part of `rbp deploy --json`). */
export function buildJson(r: BuildResult, out: string, image: string | undefined): Record<string, unknown> {
  return {
    exitCode: r.code,
    out: path.resolve(out),
    group: (r.group ?? []).map((g) => {
      const at = g.lastIndexOf('@');
      return { id: g.slice(0, at), version: g.slice(at + 1) };
    }),
    layers: r.layers,
    timings: Object.fromEntries(Object.entries(r.phases).map(([k, ms]) => [k, Math.round(ms)])),
    image: image ?? null,
    ...(r.reused ? { reused: { builtAt: r.reused } } : {}),
    ...(r.error ? { error: errorJson(r.error) } : {}),
  };
}
