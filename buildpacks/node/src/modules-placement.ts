/**
 * Where installed node_modules live: in the modules layer, each one (the root's and each
 * workspace's) replaced in the app by a relative symlink to its copy in the layer. A relative link
 * inside a moved folder that leaves it (`node_modules/greet -> ../packages/greet`) is rewritten as a
 * relative link from the layer to what it meant in the app. No link names an absolute path: they
 * hold wherever the app and the layers are, as long as the app sits where it sat beside the layer
 * (the modules layer's metadata records that place, `app`: appFromLayer). pnpm's record of its
 * store (`.modules.yaml`, storeDir) is kept relative in the layer too, and made absolute again when
 * the layer is placed back, where pnpm may read it.
 */
import { moveAcross } from '../../../lib/fsx.ts';
import fs from 'node:fs';
import path from 'node:path';

const SKIP = new Set(['.git', '.yarn', '.hg', '.svn']);

/** Every node_modules folder under `root`: the root one, and those of workspaces (not those inside another node_modules). */
export function findModuleDirs(root: string, maxDepth = 8): string[] {
  const found: string[] = [];
  const walk = (rel: string, depth: number) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(root, rel), { withFileTypes: true });
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

/** Rewrites the storeDir of pnpm's `.modules.yaml` in `dir` by `to` (given the file's folder), when there is one. */
function pnpmStoreDir(dir: string, to: (storeDir: string) => string): void {
  const file = path.join(dir, '.modules.yaml');
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const next = text.replace(
    /^(\s*"?storeDir"?\s*:\s*)("[^"\n]*"|\S+)/m,
    (_, key: string, v: string) => key + JSON.stringify(to(v.startsWith('"') ? (JSON.parse(v) as string) : v)),
  );
  if (next !== text) fs.writeFileSync(file, next);
}

/** Where the app sits from the layer: what the relative links between them depend on. */
export const appFromLayer = (appDir: string, layerPath: string) => path.relative(layerPath, appDir);

/** Moves each node_modules into the layer, keeps every link valid (and relative), and leaves a relative symlink in the app. */
export function keepModules(appDir: string, layerPath: string): void {
  const dirs = findModuleDirs(appDir);
  if (!dirs.includes('node_modules')) {
    fs.mkdirSync(path.join(appDir, 'node_modules'), { recursive: true });
    dirs.unshift('node_modules');
  }
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
      const target = fs.readlinkSync(inLayer);
      if (path.isAbsolute(target)) continue;
      const meant = path.resolve(path.join(src, path.dirname(path.relative(dst, inLayer))), target);
      if (inside(meant, src)) continue;
      fs.rmSync(inLayer);
      fs.symlinkSync(path.relative(path.dirname(inLayer), meant), inLayer);
    }
    pnpmStoreDir(dst, (store) => (path.isAbsolute(store) ? path.relative(dst, store) : store));
    fs.symlinkSync(path.relative(path.dirname(src), dst), src);
  }
}

/** On reuse: a relative symlink in the app for each node_modules folder of the layer. */
export function placeModules(layerPath: string, appDir: string): void {
  for (const rel of findModuleDirs(layerPath)) {
    const dst = path.join(appDir, rel);
    fs.rmSync(dst, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(dst), { recursive: true });
    fs.symlinkSync(path.relative(path.dirname(dst), path.join(layerPath, rel)), dst);
    pnpmStoreDir(path.join(layerPath, rel), (store) => path.resolve(layerPath, rel, store));
  }
}
