/**
 * Whether a path names a buildpackage rather than a buildpack folder. Apart from buildpackage.ts,
 * whose reader loads tar: resolving an order checks every --buildpack with this, and loads the
 * reader only for a buildpackage (lib/platform/order.ts).
 */
import fs from 'node:fs';
import path from 'node:path';

/** Is `p` a buildpackage: a `.cnb`/tar archive, or a folder holding an OCI layout? */
export function isBuildpackage(p: string): boolean {
  try {
    const st = fs.statSync(p);
    if (st.isDirectory()) return fs.existsSync(path.join(p, 'oci-layout')) && !fs.existsSync(path.join(p, 'buildpack.toml'));
    return st.isFile();
  } catch {
    return false;
  }
}
