/**
 * What a folder is made of, as one digest: every path in name order with its type, mode, size and
 * link target. The shared download cache records it when it fills an entry and compares it as it
 * links the entry into a build (lib/deps/download-cache.ts): a damaged entry (a file truncated,
 * added or gone) is dropped and filled again.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { linkFile } from './fsx.ts';

/**
 * One walk of `dir`: its digest. With `linkTo`, the walk also recreates the tree there (folders made
 * anew, every file hard-linked, links copied), so an entry is checked and placed in a single pass.
 */
export function scanTree(dir: string, linkTo?: string): { digest: string } {
  const lines: string[] = [];
  const walk = (d: string, rel: string, to: string | undefined) => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = `${d}/${name}`;
      const r = rel ? `${rel}/${name}` : name;
      const t = to === undefined ? undefined : `${to}/${name}`;
      const st = fs.lstatSync(p);
      if (st.isSymbolicLink()) {
        const target = fs.readlinkSync(p);
        lines.push(`l\0${r}\0${target}\n`);
        if (t) fs.symlinkSync(target, t);
      } else if (st.isDirectory()) {
        lines.push(`d\0${r}\0${st.mode & 0o7777}\n`);
        if (t) fs.mkdirSync(t, { mode: 0o700 });
        walk(p, r, t);
        if (t) fs.chmodSync(t, st.mode & 0o7777);
      } else {
        lines.push(`${st.isFile() ? 'f' : 'o'}\0${r}\0${st.mode & 0o7777}\0${st.size}\n`);
        if (t) linkFile(p, t);
      }
    }
  };
  const root = fs.lstatSync(dir);
  if (linkTo !== undefined) fs.mkdirSync(linkTo, { mode: 0o700 });
  walk(dir, '', linkTo);
  if (linkTo !== undefined) fs.chmodSync(linkTo, root.mode & 0o7777);
  return { digest: crypto.createHash('sha256').update(lines.join('')).digest('hex') };
}

/**
 * `dir` checked against the digest recorded for it (and with `linkTo` linked there in the same walk,
 * removed again when it differs): why it is damaged, or nothing.
 */
export function checkTree(dir: string, want: string, linkTo?: string): { damage?: string } {
  let st;
  try {
    st = fs.lstatSync(dir);
  } catch {
    return { damage: 'its folder is missing' };
  }
  if (!st.isDirectory()) return { damage: 'a file stands where its folder should be' };
  let digest: string;
  try {
    digest = scanTree(dir, linkTo).digest;
  } catch (e) {
    if (linkTo) fs.rmSync(linkTo, { recursive: true, force: true });
    return { damage: `it cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
  }
  if (digest !== want) {
    if (linkTo) fs.rmSync(linkTo, { recursive: true, force: true });
    return { damage: 'its files differ from what was stored (a file changed size, appeared or went)' };
  }
  return {};
}
