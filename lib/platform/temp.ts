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
 * The temp folders of rbp and of our buildpacks that carry their maker's pid: rbp's own, and the
 * node buildpack's copies of SSH keys (buildpacks/node/src/ssh-key.ts), which a SIGKILL of the
 * build leaves behind.
 */
const SWEPT = ['rbp-platform-', 'rbp-build-', 'rbp-ssh-'];

/**
 * Removes what a killed rbp left (its secrets among it): `<prefix><pid>-*` folders of this user whose
 * process is gone, in the memory-backed temp folder and the system one. Every rbp detect, build and
 * deploy calls it at its start, whether it makes a folder of its own or not. In the background: the
 * listing runs on libuv's thread pool, and rbp ends once it is done.
 */
export function sweepStaleTemps(): void {
  if (swept) return;
  swept = true;
  const uid = process.getuid?.();
  for (const dir of new Set([memoryTempRoot().dir, os.tmpdir()])) {
    fs.readdir(dir, (err, names) => {
      for (const n of err ? [] : names) {
        const prefix = SWEPT.find((p) => n.startsWith(p));
        const m = prefix ? /^(\d+)-/.exec(n.slice(prefix.length)) : null;
        if (!m || Number(m[1]) === process.pid || pidAlive(Number(m[1]))) continue;
        const p = path.join(dir, n);
        try {
          const st = fs.lstatSync(p);
          if (st.isDirectory() && (uid === undefined || st.uid === uid)) fs.rmSync(p, { recursive: true, force: true });
        } catch {
          // someone else's, or gone
        }
      }
    });
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
 * For commands without their own signal handling (detect; build has interrupt.ts): a signal removes
 * the temp folders and ends rbp with 128+n (a signal's default action skips the 'exit' event).
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
