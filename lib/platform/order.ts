/**
 * What to detect: groups of buildpacks. `--type T` is one of ours, `--buildpack DIR...` is one group
 * of any CNB buildpacks, `--order FILE` is an order.toml whose entries name buildpacks by `path`
 * (relative to the file, an rbp extension) or by `id` among ours and the given directories.
 * With none of these, our three buildpacks are tried one group each, in AUTO_ORDER.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readDescriptor, type BuildpackRef } from '../cnb/descriptor.ts';
import { readToml } from '../cnb/toml.ts';
import { UserError } from '../errors.ts';

export const RUNTIMES = ['node', 'static', 'phpserver'] as const;
export type Runtime = (typeof RUNTIMES)[number];

/**
 * node first: a package.json with something to start is the clearest statement of intent, and the
 * node buildpack declines a package.json with nothing to start (a generator project), which then
 * lands on static. static before phpserver: both accept a bare index.html, and a plain site is
 * static; phpserver then takes index.php apps.
 */
export const AUTO_ORDER: readonly Runtime[] = ['node', 'static', 'phpserver'];

export interface GroupEntry {
  ref: BuildpackRef;
  optional: boolean;
}
export type Order = GroupEntry[][];

/** Where our built buildpacks live: `dist/buildpacks/` beside the bundled CLI. */
export function ourBuildpacksDir(): string {
  if (process.env.RBP_BUILDPACKS_DIR) return process.env.RBP_BUILDPACKS_DIR;
  const here = path.dirname(fileURLToPath(import.meta.url));
  for (const candidate of [path.join(here, 'buildpacks'), path.resolve(here, '../../dist/buildpacks')]) {
    if (fs.existsSync(candidate)) return candidate;
  }
  return path.join(here, 'buildpacks');
}

export function ourBuildpack(name: Runtime): BuildpackRef {
  const dir = path.join(ourBuildpacksDir(), name);
  if (!fs.existsSync(path.join(dir, 'buildpack.toml'))) {
    throw new Error(`buildpack ${name} is not built at ${dir}: run npm run build`);
  }
  return readDescriptor(dir);
}

export function loadBuildpackDir(dir: string): BuildpackRef {
  const abs = path.resolve(dir);
  if (!fs.existsSync(path.join(abs, 'buildpack.toml'))) {
    throw new UserError({
      id: 'platform/buildpack/not-found',
      title: 'Not a buildpack directory',
      seen: { what: '--buildpack', value: dir },
      rule: 'A buildpack directory holds buildpack.toml and bin/detect, bin/build.',
      fix: 'Point --buildpack at the root of a CNB buildpack.',
    });
  }
  const ref = readDescriptor(abs);
  if (ref.descriptor.order) {
    throw new UserError({
      id: 'platform/buildpack/composite',
      title: 'Composite buildpacks are not run directly',
      seen: { what: '--buildpack', value: dir },
      rule: 'A composite buildpack has an [[order]] of other buildpacks, found by id.',
      fix: 'Give its component buildpacks with --buildpack DIR, or describe the order with --order FILE.',
    });
  }
  return ref;
}

export function parseType(value: string): Runtime {
  if ((RUNTIMES as readonly string[]).includes(value)) return value as Runtime;
  throw new UserError({
    id: 'platform/type/unknown',
    title: 'Unknown runtime type',
    seen: { what: '--type', value },
    rule: `--type is one of ${RUNTIMES.join(', ')}.`,
    fix: 'Pick one of these, or leave --type out to let detection choose.',
  });
}

export function orderFromFile(file: string, known: BuildpackRef[]): Order {
  const t = readToml<{ order?: { group?: { id?: string; path?: string; optional?: boolean }[] }[] }>(file);
  const base = path.dirname(path.resolve(file));
  const byId = new Map(known.map((r) => [r.descriptor.buildpack.id, r]));
  for (const r of RUNTIMES) {
    try {
      const ref = ourBuildpack(r);
      if (!byId.has(ref.descriptor.buildpack.id)) byId.set(ref.descriptor.buildpack.id, ref);
    } catch {
      /* not built: only an error if the order names it */
    }
  }
  return (t.order ?? []).map((g) =>
    (g.group ?? []).map((e) => {
      let ref: BuildpackRef | undefined;
      if (e.path) ref = loadBuildpackDir(path.resolve(base, e.path));
      else if (e.id) ref = byId.get(e.id);
      if (!ref) throw new Error(`${file}: no buildpack for ${JSON.stringify(e)}`);
      return { ref, optional: e.optional === true };
    }),
  );
}

export function resolveOrder(opts: { type?: string; buildpacks?: string[]; orderFile?: string }): Order {
  if (opts.type && (opts.buildpacks?.length || opts.orderFile)) {
    throw new UserError({
      id: 'platform/order/conflict',
      title: '--type and --buildpack/--order both given',
      seen: { what: '--type', value: opts.type },
      rule: '--type picks one of our buildpacks; --buildpack and --order give your own. Only one way can be used.',
      fix: 'Drop --type, or drop --buildpack/--order.',
    });
  }
  const dirs = (opts.buildpacks ?? []).map(loadBuildpackDir);
  if (opts.orderFile) return orderFromFile(opts.orderFile, dirs);
  if (dirs.length) return [dirs.map((ref) => ({ ref, optional: false }))];
  if (opts.type) return [[{ ref: ourBuildpack(parseType(opts.type)), optional: false }]];
  return AUTO_ORDER.map((r) => [{ ref: ourBuildpack(r), optional: false }]);
}
