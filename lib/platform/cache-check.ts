/**
 * What the cache remembers of a cached layer's folder, so that restore can tell a damaged copy (a
 * truncated binary, a file where a folder was, a removed file) from the one export stored: every
 * path with its type, mode, size and link target, hashed. Sizes and not contents: the walk is a
 * stat per file, cheap enough for every build, and catches what damages a tree in practice
 * (truncation, removal, replacement).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'smol-toml';

/**
 * The digest of a launch+cache layer whose only copy is the OUT that exported it (the cache beside
 * OUT keeps its metadata, not a second name for its files): `out:<digest>`.
 */
export const IN_OUT = 'out:';

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

/**
 * The digests of a cache's layer folders, `<escaped id>/<layer>` → digest, kept in the cache's
 * marker file (so that buildpack folders in the cache hold only what the lifecycle puts there).
 * A marker that does not parse counts as no record.
 */
export function readTrees(markerFile: string): Map<string, string> {
  try {
    const t = parse(fs.readFileSync(markerFile, 'utf8')) as { trees?: Record<string, unknown> };
    return new Map(Object.entries(t.trees ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return new Map();
  }
}

export function writeTrees(markerFile: string, trees: Map<string, string>): void {
  fs.writeFileSync(markerFile, `# This folder is an rbp layer cache: rbp build replaces it.\n${stringify({ trees: Object.fromEntries(trees) })}\n`);
}

/**
 * Why the cached folder differs from the digest export recorded, or undefined when it is intact
 * (or when nothing was recorded: a cache of an older rbp).
 */
export function treeDamage(layerDir: string, want: string | undefined): string | undefined {
  let st;
  try {
    st = fs.lstatSync(layerDir);
  } catch {
    return 'its folder is missing';
  }
  if (!st.isDirectory()) return 'a file stands where its folder should be';
  if (!want) return undefined;
  try {
    return treeDigest(layerDir) === want ? undefined : 'its files differ from what the build that cached it stored (a file changed size, appeared or went)';
  } catch (e) {
    return `it cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
  }
}
