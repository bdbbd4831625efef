/**
 * buildpack.toml (cnb-spec.md §2), read with the acceptance rules of the reference lifecycle
 * (v0.20.8, buildpack/bp_descriptor.go) and of pack (an id and a version are required): the
 * lifecycle decodes it into typed fields and checks nothing else, so any id a folder can be named
 * after is accepted (`my_bp`, `Vendor.BP`; not `sbom`, see below), and the Buildpack API is checked where the lifecycle
 * checks it, before detect and before build (detect.ts, build.ts; api.ts). A file that does not
 * parse, or whose field has the wrong type, is one user error naming the file, the line and the
 * rule, with the lifecycle's exit code (1: it cannot initialise its detector).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import { UserError } from '../errors.ts';
import { EXIT, PhaseFailure } from './exit.ts';

export interface Target {
  os?: string;
  arch?: string;
  variant?: string;
  'arch-variant'?: string;
  distros?: { name?: string; version?: string }[];
}

/** An [[order.group]] entry as written: order.ts checks its fields' types when it resolves the order. */
export interface OrderEntry {
  id?: unknown;
  version?: unknown;
  optional?: unknown;
}

export interface BuildpackDescriptor {
  /** The Buildpack API; absent or unsupported is refused before the buildpack runs (api.ts). */
  api?: string;
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
  /** Tables, as checked below; their fields are not (a stack without an id is one that matches nothing). */
  stacks?: { id?: unknown }[];
  /** Tables, as checked below; order.ts checks what they hold. */
  order?: { group?: OrderEntry[] }[];
  metadata?: Record<string, unknown>;
}

/** A buildpack found on disk: its descriptor and its root directory. */
export interface BuildpackRef {
  dir: string;
  descriptor: BuildpackDescriptor;
}

/**
 * The 1-based line of `key` in `table` ('' = the top level, before any table header), found in the
 * text: the parser gives values, not positions. Dotted keys (`buildpack.id = …`) are found too.
 */
export function lineOf(text: string, table: string, key: string): number | undefined {
  let current = '';
  const lines = text.split('\n');
  const quoted = (k: string) => `(?:${k.replace(/[.*+?^$()|[\]\\]/g, '\\$&')}|"${k}"|'${k}')`;
  const own = new RegExp(`^\\s*${quoted(key)}\\s*=`);
  const dotted = table ? new RegExp(`^\\s*${table.split('.').map(quoted).join('\\s*\\.\\s*')}\\s*\\.\\s*${quoted(key)}\\s*=`) : undefined;
  for (const [i, line] of lines.entries()) {
    const header = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?/.exec(line);
    if (header) {
      current = header[1]!.replace(/\s*\.\s*/g, '.').replace(/"/g, '');
      continue;
    }
    if (current === table && own.test(line)) return i + 1;
    if (current === '' && dotted?.test(line)) return i + 1;
  }
  return undefined;
}

function descriptorError(
  file: string,
  data: { id: string; title: string; line?: number; column?: number; value?: string; rule: string; fix: string },
): PhaseFailure {
  const where = `${file}${data.line ? `:${data.line}${data.column ? `:${data.column}` : ''}` : ''}`;
  const e = new UserError({
    id: data.id,
    title: data.title,
    seen: { what: 'buildpack.toml', ...(data.value !== undefined ? { value: data.value } : {}), where },
    rule: data.rule,
    fix: data.fix,
  });
  return new PhaseFailure(EXIT.descriptorInvalid, e.message, e);
}

type Check = { table: string; key: string; want: string; ok: (v: unknown) => boolean };
const str = (v: unknown) => typeof v === 'string';
const bool = (v: unknown) => typeof v === 'boolean';
const strList = (v: unknown) => Array.isArray(v) && v.every(str);
const tableList = (v: unknown) => Array.isArray(v) && v.every((x) => x !== null && typeof x === 'object' && !Array.isArray(x));

/** The typed fields the lifecycle decodes (a value of another type fails its decoder). */
const FIELDS: Check[] = [
  { table: '', key: 'api', want: 'a string, such as "0.10"', ok: str },
  { table: 'buildpack', key: 'id', want: 'a string', ok: str },
  { table: 'buildpack', key: 'version', want: 'a string', ok: str },
  { table: 'buildpack', key: 'name', want: 'a string', ok: str },
  { table: 'buildpack', key: 'homepage', want: 'a string', ok: str },
  { table: 'buildpack', key: 'clear-env', want: 'true or false', ok: bool },
  { table: 'buildpack', key: 'sbom-formats', want: 'a list of strings (media types)', ok: strList },
  { table: '', key: 'targets', want: 'an array of tables ([[targets]])', ok: tableList },
  { table: '', key: 'stacks', want: 'an array of tables ([[stacks]])', ok: tableList },
  { table: '', key: 'order', want: 'an array of tables ([[order]])', ok: tableList },
];

export function readDescriptor(dir: string): BuildpackRef {
  const file = path.join(path.resolve(dir), 'buildpack.toml');
  const text = fs.readFileSync(file, 'utf8');
  let d: Record<string, unknown>;
  try {
    d = parse(text);
  } catch (e) {
    const err = e as Error & { line?: number; column?: number };
    throw descriptorError(file, {
      id: 'platform/buildpack/toml-syntax',
      title: 'buildpack.toml does not parse',
      line: err.line,
      column: err.column,
      rule: `buildpack.toml is a TOML file; at line ${err.line ?? '?'}, column ${err.column ?? '?'}: ${(err.message.split('\n')[0] ?? '').replace(/^Invalid TOML document: /, '')}.`,
      fix: `Correct the TOML syntax at that line of ${file}.`,
    });
  }
  const bp = d.buildpack;
  if (bp !== undefined && (bp === null || typeof bp !== 'object' || Array.isArray(bp))) {
    throw descriptorError(file, {
      id: 'platform/buildpack/toml-invalid',
      title: 'Invalid buildpack.toml',
      line: lineOf(text, '', 'buildpack'),
      rule: '[buildpack] is a table: id, version, name, clear-env, sbom-formats.',
      fix: 'Write it as a [buildpack] table.',
    });
  }
  const tables: Record<string, Record<string, unknown>> = { '': d, buildpack: (bp ?? {}) as Record<string, unknown> };
  for (const f of FIELDS) {
    const v = tables[f.table]![f.key];
    if (v === undefined || f.ok(v)) continue;
    const name = f.table ? `${f.table}.${f.key}` : f.key;
    const line = lineOf(text, f.table, f.key);
    throw descriptorError(file, {
      id: 'platform/buildpack/toml-invalid',
      title: 'Invalid buildpack.toml',
      line,
      // The line as written (a parsed float 0.10 would show as 0.1).
      value: line ? text.split('\n')[line - 1]!.trim() : JSON.stringify(v),
      rule: `${name} is ${f.want}.`,
      fix: `In ${file}, write ${name} as ${f.want}.`,
    });
  }
  // As pack: a buildpack has an id and a version; the id names its layers folder (`/` → `_`).
  for (const key of ['id', 'version'] as const) {
    const v = tables.buildpack![key] as string | undefined;
    if (!v) {
      throw descriptorError(file, {
        id: 'platform/buildpack/toml-invalid',
        title: `buildpack.toml has no buildpack ${key}`,
        line: lineOf(text, 'buildpack', key),
        rule: `A buildpack names itself in [buildpack] with an id and a version (as pack requires); ${key} is ${v === '' ? 'empty' : 'missing'}.`,
        fix: key === 'id' ? 'Add id = "vendor/name" under [buildpack].' : 'Add version = "1.0.0" under [buildpack].',
      });
    }
  }
  const id = tables.buildpack!.id as string;
  // The lifecycle takes any id; rbp needs one that names a folder of its own (it holds the
  // buildpack's layers): not `sbom`, the folder where the build's SBOMs are gathered (the spec
  // reserves it; the lifecycle mixes the two), nor . or ..
  if (/[\0]/.test(id) || ['.', '..', 'sbom'].includes(escapeId(id))) {
    throw descriptorError(file, {
      id: 'platform/buildpack/toml-invalid',
      title: 'buildpack.toml has an id that cannot name its layers folder',
      line: lineOf(text, 'buildpack', 'id'),
      value: id,
      rule: "A buildpack's id, with / replaced by _, names the folder of its layers beside the build's own sbom folder; it cannot be sbom, . or .., or hold a NUL.",
      fix: 'Choose an id such as "vendor/name".',
    });
  }
  return { dir: path.resolve(dir), descriptor: d as unknown as BuildpackDescriptor };
}

/** `/` becomes `_`: the directory name of a buildpack's layers (cnb-spec.md §1). */
export function escapeId(id: string): string {
  return id.replaceAll('/', '_');
}

/** Which OCI arch this Node process runs on (`x64` → `amd64`, cnb-spec.md mistake 12). */
export function ociArch(arch: string = process.arch): string {
  return ({ x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm' } as Record<string, string>)[arch] ?? arch;
}
