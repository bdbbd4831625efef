/** buildpack.toml (cnb-spec.md §2). */
import path from 'node:path';
import { readToml } from './toml.ts';

export interface Target {
  os?: string;
  arch?: string;
  variant?: string;
  distros?: { name?: string; version?: string }[];
}

export interface OrderEntry {
  id: string;
  version?: string;
  optional?: boolean;
}

export interface BuildpackDescriptor {
  api: string;
  buildpack: {
    id: string;
    version: string;
    name?: string;
    homepage?: string;
    'clear-env'?: boolean;
    description?: string;
    'sbom-formats'?: string[];
  };
  targets?: Target[];
  stacks?: { id: string }[];
  order?: { group: OrderEntry[] }[];
  metadata?: Record<string, unknown>;
}

/** A buildpack found on disk: its descriptor and its root directory. */
export interface BuildpackRef {
  dir: string;
  descriptor: BuildpackDescriptor;
}

const ID_RE = /^[A-Za-z0-9./-]+$/;
const RESERVED_IDS = new Set(['app', 'config', 'generated', 'sbom']);

export function readDescriptor(dir: string): BuildpackRef {
  const file = path.join(dir, 'buildpack.toml');
  const d = readToml<BuildpackDescriptor>(file);
  const problems: string[] = [];
  if (typeof d.api !== 'string' || !/^\d+(\.\d+)?$/.test(d.api)) problems.push(`api must be "<major>.<minor>", got ${JSON.stringify(d.api)}`);
  if (!d.buildpack || typeof d.buildpack.id !== 'string') problems.push('[buildpack] id is missing');
  else if (!ID_RE.test(d.buildpack.id) || RESERVED_IDS.has(d.buildpack.id)) problems.push(`[buildpack] id ${JSON.stringify(d.buildpack.id)} is not a valid buildpack id`);
  if (!d.buildpack || typeof d.buildpack.version !== 'string') problems.push('[buildpack] version is missing');
  if (problems.length) throw new Error(`${file}: ${problems.join('; ')}`);
  return { dir: path.resolve(dir), descriptor: d };
}

/** `/` becomes `_`: the directory name of a buildpack's layers (cnb-spec.md §1). */
export function escapeId(id: string): string {
  return id.replaceAll('/', '_');
}

/** Which OCI arch this Node process runs on (`x64` → `amd64`, cnb-spec.md mistake 12). */
export function ociArch(arch: string = process.arch): string {
  return ({ x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm' } as Record<string, string>)[arch] ?? arch;
}
