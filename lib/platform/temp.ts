/**
 * rbp's private temp folders (platform env files with secrets, plans, copies of configuration):
 * made fresh by mkdtemp (mode 0700, a name no one can guess or reuse) on a memory-backed file system
 * where there is one (lib/memory-temp.ts: the env files are the one place a secret must be a file),
 * removed on every exit path, the process's exit included. A folder left by an rbp that was killed
 * with SIGKILL is removed by the next rbp: the folder's name carries its maker's pid.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { signalExit } from '../cnb/exit.ts';
import { memoryTempRoot } from '../memory-temp.ts';
import { pidAlive } from '../pid.ts';

const live = new Set<string>();
let hooked = false;
let swept = false;
let signalsHooked = false;

/**
 * Removes `<prefix><pid>-*` folders whose process is gone and that belong to this user. In the
 * background: reading a temp folder of thousands of entries costs milliseconds that `rbp detect`
 * need not wait for (the listing runs on libuv's thread pool; rbp ends once it is done).
 */
function sweep(root: string): void {
  // The system temp folder too: it held them before, and holds them where no memory-backed one exists.
  for (const dir of new Set([root, os.tmpdir()])) {
    fs.readdir(dir, (err, names) => {
      if (!err) removeStale(dir, names);
    });
  }
}

/**
 * The temp folders of rbp and of our buildpacks that carry their maker's pid: rbp's own, and the
 * node buildpack's copies of SSH keys (buildpacks/node/src/ssh-key.ts), which a SIGKILL of the
 * build leaves behind.
 */
const SWEPT = ['rbp-platform-', 'rbp-build-', 'rbp-ssh-'];

function removeStale(root: string, names: string[]): void {
  const uid = process.getuid?.();
  for (const n of names) {
    const prefix = SWEPT.find((p) => n.startsWith(p));
    const m = prefix ? /^(\d+)-/.exec(n.slice(prefix.length)) : null;
    if (!m || Number(m[1]) === process.pid || pidAlive(Number(m[1]))) continue;
    const p = path.join(root, n);
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

const removeAll = () => {
  for (const d of live) fs.rmSync(d, { recursive: true, force: true });
  live.clear();
};

/**
 * For commands without their own signal handling (detect): a signal removes the temp folders and
 * ends rbp with 128+n. (A signal's default action ends Node.js without its 'exit' event.) `rbp
 * build` handles signals itself (interrupt.ts) and removes its folder on the way out.
 */
export function removeOnSignals(): void {
  // Once per process: main() may run several commands in one (the tests do).
  if (signalsHooked) return;
  signalsHooked = true;
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      removeAll();
      process.exit(signalExit(sig));
    });
  }
}

/**
 * Removes what a killed rbp left (its secrets among it): every rbp detect, build and deploy calls it
 * at its start, whether it makes a folder of its own or not (an automatic detect and a reused deploy
 * make none).
 */
export function sweepStaleTemps(): void {
  if (swept) return;
  swept = true;
  sweep(memoryTempRoot().dir);
}

export function privateTemp(prefix: string): PrivateTemp {
  const root = memoryTempRoot().dir;
  sweepStaleTemps();
  const dir = fs.mkdtempSync(path.join(root, `${prefix}${process.pid}-`));
  fs.chmodSync(dir, 0o700);
  live.add(dir);
  if (!hooked) {
    hooked = true;
    process.on('exit', removeAll);
  }
  return {
    dir,
    remove() {
      fs.rmSync(dir, { recursive: true, force: true });
      live.delete(dir);
    },
  };
}
