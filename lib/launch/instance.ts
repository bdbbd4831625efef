/**
 * Instance sizes and their memory. The launcher reads the memory from the cgroup limit; `rbp run`
 * sets it locally with `--instance` / `--memory`, handed to the process as RBP_INSTANCE_MEMORY.
 */
import { value } from '../config/read.ts';
import fs from 'node:fs';
import { UserError } from '../errors.ts';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

export const INSTANCE_SIZES: Record<string, number> = {
  pico: 256 * MiB,
  nano: 512 * MiB,
  XS: 1 * GiB,
  S: 2 * GiB,
  M: 4 * GiB,
  L: 8 * GiB,
  XL: 16 * GiB,
  '2XL': 24 * GiB,
  '3XL': 32 * GiB,
};

export const DEFAULT_INSTANCE = 'XS';

export function parseInstance(value: string, what = '--instance'): string {
  const found = Object.keys(INSTANCE_SIZES).find((k) => k.toLowerCase() === value.toLowerCase());
  if (!found) {
    throw new UserError({
      id: 'platform/instance/unknown',
      title: 'Unknown instance size',
      seen: { what, value },
      rule: `The instance size is one of ${Object.keys(INSTANCE_SIZES).join(', ')}.`,
      fix: `Use one of those sizes, for example ${what} ${DEFAULT_INSTANCE}.`,
    });
  }
  return found;
}

/** `512M`, `1G`, `1.5GiB`, `268435456` → bytes. */
export function parseMemory(value: string, what = '--memory'): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?$/i.exec(value.trim());
  const unit = { '': 1, k: 1024, m: MiB, g: GiB, t: 1024 * GiB }[(m?.[2] ?? '').toLowerCase()];
  const bytes = m && unit !== undefined ? Math.floor(Number(m[1]) * unit) : NaN;
  if (!Number.isFinite(bytes) || bytes < 16 * MiB) {
    throw new UserError({
      id: 'platform/memory/invalid',
      title: 'Invalid memory size',
      seen: { what, value },
      rule: 'A memory size is a number with an optional unit K, M, G or T (binary units), at least 16M.',
      fix: `Write it like ${what} 512M or ${what} 2G.`,
    });
  }
  return bytes;
}

/** The memory this process may use: RBP_INSTANCE_MEMORY (set by rbp), else the cgroup limit. */
export function instanceMemory(env: Record<string, string | undefined> = process.env): number | undefined {
  const fromEnv = value<number>(env, 'RBP_INSTANCE_MEMORY');
  if (fromEnv) return fromEnv;
  for (const f of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    try {
      const raw = fs.readFileSync(f, 'utf8').trim();
      const n = Number(raw);
      // cgroup v1 reports "no limit" as a huge number close to 2^63.
      if (raw !== 'max' && Number.isFinite(n) && n > 0 && n < 2 ** 50) return n;
    } catch {
      /* not in a cgroup with a limit */
    }
  }
  return undefined;
}
