/**
 * Where installed node_modules live: in the modules layer, each one replaced in the app by a symlink
 * to its copy in the layer. A workspace install writes more than the root node_modules (each
 * workspace may get its own), and the package managers link workspace packages with relative links
 * (`node_modules/greet -> ../packages/greet`). Once the folder sits in the layer such a link would
 * point beside the layer, at nothing; so every link that leaves the moved folder is rewritten to the
 * absolute path it meant in the app. The layer keeps a record of the folders and of those links, so a
 * later build that reuses the layer places every folder again, and rewrites the links when the app
 * sits elsewhere than it did.
 */
import { moveAcross } from '../../../lib/fsx.ts';
import fs from 'node:fs';
import path from 'node:path';

export const PLACEMENT_RECORD = '.rbp-modules.json';

export interface PlacementRecord {
  /** Where the app was when the links were written. */
  appDir: string;
  /** node_modules folders, relative to the app (the root one first). */
  dirs: string[];
  /** Links (relative to the layer) rewritten to absolute paths in the app. */
  links: string[];
}

const SKIP = new Set(['.git', '.yarn', '.hg', '.svn']);

/** Every node_modules folder in the app: the root one, and those of workspaces (not those inside another node_modules). */
export function findModuleDirs(appDir: string, maxDepth = 8): string[] {
  const found: string[] = [];
  const walk = (rel: string, depth: number) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(appDir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (!e.isDirectory() || SKIP.has(e.name)) continue;
      const child = rel ? path.join(rel, e.name) : e.name;
      if (e.name === 'node_modules') found.push(child);
      else if (depth < maxDepth) walk(child, depth + 1);
    }
  };
  walk('', 0);
  return found.sort((a, b) => (a === 'node_modules' ? -1 : b === 'node_modules' ? 1 : a.localeCompare(b)));
}

function inside(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir + path.sep);
}

/** Moves each node_modules into the layer, keeps every link valid, and leaves a symlink in the app. */
export function keepModules(appDir: string, layerPath: string): PlacementRecord {
  const dirs = findModuleDirs(appDir);
  if (!dirs.includes('node_modules')) {
    fs.mkdirSync(path.join(appDir, 'node_modules'), { recursive: true });
    dirs.unshift('node_modules');
  }
  const links: string[] = [];
  for (const rel of dirs) {
    const src = path.join(appDir, rel);
    const dst = path.join(layerPath, rel);
    fs.mkdirSync(path.dirname(dst), { recursive: true });
    moveAcross(src, dst);
    for (const e of fs.readdirSync(dst, { recursive: true, withFileTypes: true })) {
      if (!e.isSymbolicLink()) continue;
      // The entry's folder: `parentPath` from Node.js 20.12, `path` before it (and neither in 20.0), whatever @types/node says.
      const at: { parentPath?: string; path?: string } = e;
      const inLayer = path.join(at.parentPath ?? at.path ?? dst, e.name);
      const sub = path.relative(dst, inLayer);
      const target = fs.readlinkSync(inLayer);
      if (path.isAbsolute(target)) continue;
      const meant = path.resolve(path.join(src, path.dirname(sub)), target);
      if (inside(meant, src)) continue;
      fs.rmSync(inLayer);
      fs.symlinkSync(meant, inLayer);
      links.push(path.join(rel, sub));
    }
    fs.symlinkSync(dst, src);
  }
  const record: PlacementRecord = { appDir, dirs, links };
  fs.writeFileSync(path.join(layerPath, PLACEMENT_RECORD), JSON.stringify(record));
  return record;
}

/** On reuse: a symlink for each recorded folder; links moved to the app's new place if it moved. */
export function placeModules(layerPath: string, appDir: string): PlacementRecord {
  let record: PlacementRecord;
  try {
    record = JSON.parse(fs.readFileSync(path.join(layerPath, PLACEMENT_RECORD), 'utf8')) as PlacementRecord;
  } catch {
    record = { appDir, dirs: ['node_modules'], links: [] };
  }
  if (record.appDir !== appDir) {
    for (const l of record.links) {
      const file = path.join(layerPath, l);
      const target = fs.readlinkSync(file);
      if (!inside(target, record.appDir)) continue;
      fs.rmSync(file);
      fs.symlinkSync(path.join(appDir, path.relative(record.appDir, target)), file);
    }
    record = { ...record, appDir };
    fs.writeFileSync(path.join(layerPath, PLACEMENT_RECORD), JSON.stringify(record));
  }
  for (const rel of record.dirs) {
    const src = path.join(layerPath, rel);
    const dst = path.join(appDir, rel);
    if (!fs.existsSync(src)) continue;
    fs.rmSync(dst, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(dst), { recursive: true });
    fs.symlinkSync(src, dst);
  }
  return record;
}
