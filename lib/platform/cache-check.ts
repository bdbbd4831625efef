/**
 * What the cache remembers of a cached layer's folder, so that restore can tell a damaged copy (a
 * truncated binary, a file where a folder was, a removed file) from the one export stored: every
 * path with its type, mode, size and link target, hashed. Sizes and not contents: the walk is a
 * stat per file, cheap enough for every build, and catches what damages a tree in practice
 * (truncation, removal, replacement). The digest sits beside the layer as `<layer>.rbp-tree`.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const treeFile = (layerDir: string) => `${layerDir}.rbp-tree`;

export function treeDigest(dir: string): string {
  const h = crypto.createHash('sha256');
  const walk = (d: string, rel: string) => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = path.join(d, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = fs.lstatSync(p);
      if (st.isSymbolicLink()) h.update(`l\0${r}\0${fs.readlinkSync(p)}\n`);
      else if (st.isDirectory()) {
        h.update(`d\0${r}\0${st.mode & 0o7777}\n`);
        walk(p, r);
      } else h.update(`${st.isFile() ? 'f' : 'o'}\0${r}\0${st.mode & 0o7777}\0${st.size}\n`);
    }
  };
  walk(dir, '');
  return h.digest('hex');
}

/** Records the digest of a layer folder just exported to the cache. */
export function recordTree(layerDir: string): void {
  fs.writeFileSync(treeFile(layerDir), `${treeDigest(layerDir)}\n`);
}

/**
 * Why the cached folder differs from what export recorded, or undefined when it is intact (or was
 * cached by an rbp that recorded nothing).
 */
export function treeDamage(layerDir: string): string | undefined {
  let want: string;
  try {
    want = fs.readFileSync(treeFile(layerDir), 'utf8').trim();
  } catch {
    return undefined;
  }
  let st;
  try {
    st = fs.lstatSync(layerDir);
  } catch {
    return 'its folder is missing';
  }
  if (!st.isDirectory()) return 'a file stands where its folder should be';
  try {
    return treeDigest(layerDir) === want ? undefined : 'its files differ from what the build that cached it stored (a file changed size, appeared or went)';
  } catch (e) {
    return `it cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
  }
}
