/**
 * rbp's private temp folders (platform env files with secrets, plans, copies of configuration):
 * made fresh by mkdtemp (mode 0700, a name no one can guess or reuse), removed on every exit path,
 * the process's exit included. A folder left by an rbp that was killed with SIGKILL is removed by the
 * next rbp: the folder's name carries its maker's pid.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const live = new Set<string>();
let hooked = false;

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes `<prefix><pid>-*` folders whose process is gone and that belong to this user. */
function sweep(prefix: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(os.tmpdir());
  } catch {
    return;
  }
  const uid = process.getuid?.();
  for (const n of names) {
    const m = n.startsWith(prefix) ? /^(\d+)-/.exec(n.slice(prefix.length)) : null;
    if (!m || Number(m[1]) === process.pid || pidAlive(Number(m[1]))) continue;
    const p = path.join(os.tmpdir(), n);
    try {
      const st = fs.lstatSync(p);
      if (st.isDirectory() && (uid === undefined || st.uid === uid)) fs.rmSync(p, { recursive: true, force: true });
    } catch {
      // someone else's, or gone
    }
  }
}

export interface PrivateTemp {
  dir: string;
  remove(): void;
}

export function privateTemp(prefix: string): PrivateTemp {
  sweep(prefix);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}${process.pid}-`));
  fs.chmodSync(dir, 0o700);
  live.add(dir);
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const d of live) fs.rmSync(d, { recursive: true, force: true });
    });
  }
  return {
    dir,
    remove() {
      fs.rmSync(dir, { recursive: true, force: true });
      live.delete(dir);
    },
  };
}
