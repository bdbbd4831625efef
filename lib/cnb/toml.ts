import fs from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'smol-toml';

export type TomlTable = Record<string, unknown>;

export function readToml<T = TomlTable>(file: string): T {
  return parse(fs.readFileSync(file, 'utf8')) as T;
}

export function readTomlIfExists<T = TomlTable>(file: string): T | undefined {
  try {
    return readToml<T>(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** Drops `undefined` values, which TOML cannot hold. */
function clean(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clean);
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    const out: TomlTable = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = clean(v);
    return out;
  }
  return value;
}

export function tomlString(data: TomlTable): string {
  return stringify(clean(data));
}

/** Writes through a temporary file and a rename, so a reader never sees half a file. */
export function writeToml(file: string, data: TomlTable): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, tomlString(data));
  fs.renameSync(tmp, file);
}
