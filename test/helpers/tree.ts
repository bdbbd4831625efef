import fs from 'node:fs';
import path from 'node:path';

/** Every file of a folder, sorted: its text in `encoding`, or a link's target (`-> target`). */
export function filesOf(dir: string, encoding: BufferEncoding = 'utf8'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of (fs.readdirSync(dir, { recursive: true }) as string[]).sort()) {
    const p = path.join(dir, f);
    const st = fs.lstatSync(p);
    if (st.isSymbolicLink()) out[f] = `-> ${fs.readlinkSync(p)}`;
    else if (st.isFile()) out[f] = fs.readFileSync(p, encoding);
  }
  return out;
}
