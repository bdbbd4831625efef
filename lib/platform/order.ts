/**
 * What to detect: groups of buildpacks. `--type T` is one of ours, `--buildpack DIR...` is one group
 * of any CNB buildpacks, `--order FILE` is an order.toml whose entries name buildpacks by `path`
 * (relative to the file, an rbp extension) or by `id` among ours and the given directories.
 * With none of these, our three buildpacks are tried one group each, in AUTO_ORDER.
 *
 * A composite (meta) buildpack — a buildpack.toml with `[[order]]` and no bin/ — is resolved here
 * into its component buildpacks (recursively); detect.ts expands the order as the lifecycle does
 * (expand.ts). Components are found by id@version, in this order:
 * 1. the buildpacks given with `--buildpack`;
 * 2. beside the composite, in the platform layout `<dir>/<escaped-id>/<version>/` or
 *    `<dir>/<escaped-id>/` (where `<dir>` is the composite's parent, or the layout root when the
 *    composite itself sits at `<root>/<escaped-id>/<version>/`), then any sibling directory of
 *    the composite holding that id@version (a checkout of buildpacks side by side);
 * 3. our own buildpacks (dist/buildpacks).
 */
import fs from 'node:fs';
import path from 'node:path';
import { escapeId, readDescriptor, type BuildpackRef } from '../cnb/descriptor.ts';
import { readToml } from '../cnb/toml.ts';
import { UserError } from '../errors.ts';
import { isBuildpackage } from '../package/buildpackage-path.ts';
import { closest } from '../suggest.ts';

import { AUTO_ORDER, ourBuildpack, ourBuildpacksDir, RUNTIMES, type Runtime } from '../package/our-buildpacks.ts';

export interface GroupEntry {
  ref: BuildpackRef;
  optional: boolean;
  /** A composite buildpack's own order, its components resolved; absent for a component buildpack. */
  order?: Order;
}
export type Order = GroupEntry[][];

/** Our buildpacks that are built (a missing one only matters when something names it). */
function ourBuiltBuildpacks(): BuildpackRef[] {
  return RUNTIMES.flatMap((r) => {
    try {
      return [ourBuildpack(r)];
    } catch {
      return [];
    }
  });
}

export function isComposite(ref: BuildpackRef): boolean {
  // As the lifecycle: a buildpack is a composite when its [[order]] is not empty.
  return (ref.descriptor.order?.length ?? 0) > 0;
}

export async function loadBuildpackDir(dir: string, what = '--buildpack'): Promise<BuildpackRef> {
  // A buildpackage (`x.cnb` or an OCI layout folder) is unpacked and its entry buildpack used. Its
  // reader (tar) is loaded only then: rbp detect on our own buildpacks starts without it.
  const abs = isBuildpackage(dir) ? (await import('../package/buildpackage.ts')).openBuildpackage(dir) : path.resolve(dir);
  if (!fs.existsSync(path.join(abs, 'buildpack.toml'))) {
    throw new UserError({
      id: 'platform/buildpack/not-found',
      title: 'Not a buildpack directory',
      seen: { what, value: dir },
      rule: 'A buildpack directory holds buildpack.toml, and bin/detect, bin/build unless it is a composite with an [[order]].',
      fix: 'Point it at the root of a CNB buildpack.',
    });
  }
  return readDescriptor(abs);
}

export function parseType(value: string): Runtime {
  if ((RUNTIMES as readonly string[]).includes(value)) return value as Runtime;
  const meant = closest(value, [...RUNTIMES, ...Object.keys(TYPE_WORDS)]);
  const type = meant ? (TYPE_WORDS[meant] ?? meant) : undefined;
  throw new UserError({
    id: 'platform/type/unknown',
    title: 'Unknown runtime type',
    seen: { what: '--type', value },
    rule: `--type is one of ${RUNTIMES.join(', ')}.`,
    fix: type ? `Did you mean --type ${type}?` : 'Pick one of these, or leave --type out to let detection choose.',
  });
}

/** Words users type for a runtime (other platforms' names for it). */
const TYPE_WORDS: Record<string, Runtime> = { nodejs: 'node', bun: 'node', php: 'phpserver', frankenphp: 'phpserver', html: 'static', site: 'static' };

/**
 * A `--buildpack` value: a buildpack directory or buildpackage when such a path exists, else, as
 * pack reads it, `id[@version]` (or `urn:cnb:builder:id[@version]`) naming one of ours.
 */
export async function loadBuildpackRef(value: string): Promise<BuildpackRef> {
  if (fs.existsSync(value)) return await loadBuildpackDir(value);
  const m = /^(?:urn:cnb:builder:)?([A-Za-z0-9][\w.-]*(?:\/[\w.-]+)*)(?:@([\w.+-]+))?$/.exec(value);
  if (!m || /^[a-z][a-z0-9+.-]*:\/\//i.test(value) || (value.startsWith('urn:') && !value.startsWith('urn:cnb:builder:'))) {
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(value)?.[1];
    if (scheme) {
      throw new UserError({
        id: 'platform/buildpack/unsupported',
        title: `rbp does not fetch buildpacks from ${scheme}: references`,
        seen: { what: '--buildpack', value },
        rule: 'rbp runs buildpacks from this machine: a directory, a buildpackage (x.cnb or an OCI layout folder), or the id of one of ours.',
        fix:
          scheme === 'docker'
            ? 'Save the image as a buildpackage first (skopeo copy docker://… oci:DIR), then give --buildpack DIR.'
            : 'Download it first, then give --buildpack with its path.',
      });
    }
    return await loadBuildpackDir(value);
  }
  const [, id, version] = m as unknown as [string, string, string | undefined];
  const ours = ourBuiltBuildpacks();
  const found = ours.find((r) => matches(r, id, version));
  if (found) return found;
  const sameId = ours.filter((r) => r.descriptor.buildpack.id === id);
  const ids = ours.map((r) => r.descriptor.buildpack.id);
  // `-b node`: our rbp/node by the last part of its id.
  const byName = ids.find((i) => i.split('/').pop() === id);
  if (!id.includes('/') && !sameId.length && !byName) return await loadBuildpackDir(value); // a folder name: not there
  const meant = byName ?? closest(id, ids);
  throw new UserError({
    id: 'platform/buildpack/id-not-found',
    title: `No buildpack ${version ? `${id}@${version}` : id} here`,
    seen: { what: '--buildpack', value },
    rule: `--buildpack is a directory or buildpackage on this machine, or the id of one of rbp's buildpacks: ${ours.map(bpKey).join(', ') || 'none built'}.`,
    fix: sameId.length
      ? `Use ${sameId.map(bpKey).join(' or ')} (this rbp has that version), or leave the version out.`
      : meant
        ? `Did you mean ${meant}?`
        : "Give the buildpack's directory (or .cnb file) instead.",
  });
}

export const bpKey = (ref: BuildpackRef) => `${ref.descriptor.buildpack.id}@${ref.descriptor.buildpack.version}`;
const wanted = (e: { id: string; version?: string }) => (e.version ? `${e.id}@${e.version}` : e.id);

const matches = (ref: BuildpackRef, id: string, version: string | undefined) =>
  ref.descriptor.buildpack.id === id && (version === undefined || ref.descriptor.buildpack.version === version);

function readIfBuildpack(dir: string): BuildpackRef | undefined {
  if (!fs.existsSync(path.join(dir, 'buildpack.toml'))) return undefined;
  try {
    return readDescriptor(dir);
  } catch {
    return undefined; // someone else's broken buildpack.toml is not ours to report while searching
  }
}

/** Where component buildpacks are looked for: buildpacks already loaded, then directories. */
interface Pool {
  given: BuildpackRef[];
  ours: BuildpackRef[];
}

/** Platform-layout roots a buildpack in `dir` looks beside: its parent, or the layout root above it. */
function layoutRoots(ref: BuildpackRef): string[] {
  const parent = path.dirname(ref.dir);
  const roots = [parent];
  const { id, version } = ref.descriptor.buildpack;
  if (path.basename(ref.dir) === version && path.basename(parent) === escapeId(id)) roots.unshift(path.dirname(parent));
  return roots;
}

/** `<root>/<escaped-id>/<version>/` then `<root>/<escaped-id>/`, for each root. */
function inLayout(roots: string[], id: string, version: string | undefined, tried: string[]): BuildpackRef | undefined {
  for (const root of roots) {
    const dirs = version ? [path.join(root, escapeId(id), version), path.join(root, escapeId(id))] : [path.join(root, escapeId(id))];
    for (const dir of dirs) {
      tried.push(dir);
      const ref = readIfBuildpack(dir);
      if (ref && matches(ref, id, version)) return ref;
    }
  }
  return undefined;
}

function inSiblings(dir: string, id: string, version: string | undefined, tried: string[]): BuildpackRef | undefined {
  tried.push(`${dir}/*/`);
  let names: string[];
  try {
    names = fs.readdirSync(dir).sort();
  } catch {
    return undefined;
  }
  for (const name of names) {
    const ref = readIfBuildpack(path.join(dir, name));
    if (ref && matches(ref, id, version)) return ref;
  }
  return undefined;
}

function findComponent(e: { id: string; version: string | undefined }, composite: BuildpackRef, pool: Pool): BuildpackRef {
  const tried = pool.given.map((r) => `--buildpack ${r.dir}`);
  let found = pool.given.find((r) => matches(r, e.id, e.version));
  found ??= inLayout(layoutRoots(composite), e.id, e.version, tried);
  found ??= inSiblings(path.dirname(composite.dir), e.id, e.version, tried);
  if (!found) {
    tried.push(`our buildpacks in ${ourBuildpacksDir()}`);
    found = pool.ours.find((r) => matches(r, e.id, e.version));
  }
  if (found) return found;
  const otherVersions = [...pool.given, ...pool.ours]
    .filter((r) => r.descriptor.buildpack.id === e.id)
    .map((r) => `(${bpKey(r)} is at ${r.dir}: another version)`);
  throw new UserError({
    id: 'platform/buildpack/component-not-found',
    title: `Component buildpack ${wanted(e)} of composite ${bpKey(composite)} not found`,
    seen: {
      what: `[[order.group]] id = ${JSON.stringify(e.id)}${e.version ? `, version = ${JSON.stringify(e.version)}` : ''}`,
      where: path.join(composite.dir, 'buildpack.toml'),
    },
    rule: 'A composite buildpack names its components by id and version; rbp looks for each in:',
    details: [...tried, ...otherVersions],
    fix: `Give ${wanted(e)} with --buildpack DIR, or put it beside the composite, at ${path.join(layoutRoots(composite)[0]!, escapeId(e.id), e.version ?? '<version>')}.`,
  });
}

function badOrder(ref: BuildpackRef, problem: string): UserError {
  return new UserError({
    id: 'platform/buildpack/order-invalid',
    title: `Invalid [[order]] in composite buildpack ${bpKey(ref)}`,
    seen: { what: 'buildpack.toml', value: problem, where: path.join(ref.dir, 'buildpack.toml') },
    rule: 'Each [[order]] holds [[order.group]] entries, each with a string id and version and an optional boolean optional.',
    fix: "Correct the composite buildpack's buildpack.toml.",
  });
}

/** A group entry; for a composite, its components resolved recursively (a cycle is an error). */
function resolveEntry(ref: BuildpackRef, optional: boolean, pool: Pool, path_: string[] = [], memo = new Map<string, Order>()): GroupEntry {
  if (!isComposite(ref)) return { ref, optional };
  const k = bpKey(ref);
  if (path_.includes(k)) {
    throw new UserError({
      id: 'platform/buildpack/order-cycle',
      title: `Composite buildpack ${k} contains itself`,
      seen: { what: 'composite buildpacks', value: [...path_, k].join(' → '), where: path.join(ref.dir, 'buildpack.toml') },
      rule: 'A composite buildpack may contain other composites, but not itself through any of them.',
      fix: 'Remove the entry that leads back to it.',
    });
  }
  let order = memo.get(k);
  if (!order) {
    order = ref.descriptor.order!.map((g, i) => {
      if (!Array.isArray(g.group)) throw badOrder(ref, `[[order]] #${i + 1} has no [[order.group]] list`);
      return g.group.map(({ id, version, optional }) => {
        if (typeof id !== 'string') throw badOrder(ref, `an entry of [[order]] #${i + 1} has no id`);
        if (version !== undefined && typeof version !== 'string') throw badOrder(ref, `${id}: version must be a string`);
        return resolveEntry(findComponent({ id, version }, ref, pool), optional === true, pool, [...path_, k], memo);
      });
    });
    memo.set(k, order);
  }
  return { ref, optional, order };
}

export interface OrderFileEntry {
  id?: string;
  version?: string;
  path?: string;
  optional?: boolean;
}

/** [[order]] tables, each with an [[order.group]] list or none (the entries are checked as they are resolved). */
function isOrderTables(v: unknown): v is { group?: OrderFileEntry[] }[] {
  const isTable = (g: unknown): g is { group?: unknown } => g !== null && typeof g === 'object';
  return Array.isArray(v) && v.every((g: unknown) => isTable(g) && (g.group === undefined || Array.isArray(g.group)));
}

export async function orderFromFile(file: string, known: BuildpackRef[]): Promise<Order> {
  const bad = (title: string, fix: string, code?: string) =>
    new UserError({
      id: 'platform/order/file',
      title,
      seen: { what: '--order', value: file, ...(code ? { where: code } : {}) },
      rule: '--order names an order.toml: [[order]] tables, each with [[order.group]] entries naming a buildpack by id (and version) or by path.',
      fix,
    });
  let t: { order?: unknown };
  try {
    t = readToml<{ order?: unknown }>(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code) throw bad('Order file not readable', 'Check the path.', code);
    throw bad('Order file is not valid TOML', `Fix the TOML (${(e as Error).message.split('\n')[0]}).`);
  }
  if (!isOrderTables(t.order))
    throw bad('Order file has no [[order]] groups', 'Write it like [[order]] then [[order.group]] with id = "rbp/node" (or path = "my-buildpack").');
  const groups = t.order.map((g) => g.group ?? []);
  return await orderFromGroups(groups, path.dirname(path.resolve(file)), known, file);
}

/** Groups of entries naming buildpacks by `path` (relative to `base`) or `id`; `file` is named in errors. */
export async function orderFromGroups(groups: OrderFileEntry[][], base: string, known: BuildpackRef[], file: string): Promise<Order> {
  const pool: Pool = { given: known, ours: ourBuiltBuildpacks() };
  // As /cnb/order.toml beside /cnb/buildpacks/: ids are also looked up in the platform layout there.
  const roots = [base, path.join(base, 'buildpacks')];
  const order: Order = [];
  for (const g of groups) {
    const group: GroupEntry[] = [];
    for (const e of g) {
      const tried: string[] = [];
      let ref: BuildpackRef | undefined;
      if (e.path) ref = await loadBuildpackDir(path.resolve(base, e.path), `${file}: path`);
      else if (typeof e.id === 'string') {
        tried.push(...known.map((r) => `--buildpack ${r.dir}`));
        ref = known.find((r) => matches(r, e.id!, e.version)) ?? inLayout(roots, e.id, e.version, tried);
        tried.push(`our buildpacks in ${ourBuildpacksDir()}`);
        ref ??= pool.ours.find((r) => matches(r, e.id!, e.version));
      }
      if (!ref) {
        throw new UserError({
          id: 'platform/order/not-found',
          title: e.id ? `Buildpack ${wanted(e as { id: string; version?: string })} of the order not found` : 'Order entry names no buildpack',
          seen: { what: '[[order.group]]', value: JSON.stringify(e), where: path.resolve(file) },
          rule: e.id
            ? 'An order entry names a buildpack by id (and version), looked for in:'
            : 'An order entry has an id (and version), or a path to a buildpack directory.',
          details: tried,
          fix: 'Give the buildpack with --buildpack DIR, or name it by path = "DIR" relative to the order file.',
        });
      }
      group.push(resolveEntry(ref, e.optional === true, pool));
    }
    order.push(group);
  }
  return order;
}

export async function resolveOrder(opts: { type?: string; buildpacks?: string[]; orderFile?: string }): Promise<Order> {
  if (opts.type && (opts.buildpacks?.length || opts.orderFile)) {
    throw new UserError({
      id: 'platform/order/conflict',
      title: '--type and --buildpack/--order both given',
      seen: { what: '--type', value: opts.type },
      rule: '--type picks one of our buildpacks; --buildpack and --order give your own. Only one way can be used.',
      fix: 'Drop --type, or drop --buildpack/--order.',
    });
  }
  const dirs: BuildpackRef[] = [];
  for (const d of opts.buildpacks ?? []) dirs.push(await loadBuildpackRef(d));
  if (opts.orderFile) return await orderFromFile(opts.orderFile, dirs);
  if (dirs.length) {
    const pool: Pool = { given: dirs, ours: dirs.some(isComposite) ? ourBuiltBuildpacks() : [] };
    return [dirs.map((ref) => resolveEntry(ref, false, pool))];
  }
  if (opts.type) return [[{ ref: ourBuildpack(parseType(opts.type)), optional: false }]];
  return AUTO_ORDER.map((r) => [{ ref: ourBuildpack(r), optional: false }]);
}
