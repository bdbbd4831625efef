/**
 * The lock a build holds while it fills a download cache entry, so that builds asking for the same
 * tool at once download it once. It never decides correctness (the entry's rename does): a lock
 * lost or doubled only costs a second download.
 *
 * A file created exclusively (`wx`) holding `host pid nonce`, its modification time refreshed while
 * held. It is stale, and taken over, when its process is gone (same host, SIGKILL included), or
 * when it was not refreshed for STALE_MS (a holder on another host; LOCAL_STALE_MS for a live
 * process of this host, whose pid may have been reused). Two waiters may judge the same lock stale:
 * each moves it aside under a name of its own and checks that it moved the one it judged (its
 * nonce), putting back one it should not have taken.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { pidAlive } from '../pid.ts';

export const STALE_MS = 5_000;
const REFRESH_MS = 1_000;

interface Holder {
  host: string;
  pid: number;
  nonce: string;
}

function readHolder(file: string): { holder: Holder; mtimeMs: number } | undefined {
  try {
    const [host, pid, nonce] = fs.readFileSync(file, 'utf8').trim().split(' ');
    const mtimeMs = fs.statSync(file).mtimeMs;
    return { holder: { host: host ?? '', pid: Number(pid), nonce: nonce ?? '' }, mtimeMs };
  } catch {
    return undefined;
  }
}

/** How long a live process of this host may leave its lock unrefreshed (a busy event loop; a reused pid). */
const LOCAL_STALE_MS = 120_000;

function isStale(h: Holder, mtimeMs: number): boolean {
  const age = Date.now() - mtimeMs;
  if (h.host === os.hostname() && Number.isInteger(h.pid) && h.pid > 0) return !pidAlive(h.pid) || age > LOCAL_STALE_MS;
  return age > STALE_MS;
}

/** Removes `file` if it still is the stale lock of `judged` (nothing else). */
function takeAway(file: string, judged: Holder): void {
  const aside = `${file}.${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  try {
    fs.renameSync(file, aside);
  } catch {
    return; // another waiter moved it first
  }
  const moved = readHolder(aside)?.holder;
  if (moved && moved.nonce !== judged.nonce) {
    // A fresh lock taken meanwhile: back where it was, unless yet another one is there now.
    try {
      fs.linkSync(aside, file);
    } catch {
      // a third lock stands: two fills may run, which the entry's rename makes safe
    }
  }
  fs.rmSync(aside, { force: true });
}

export interface HeldLock {
  release(): void;
}

/** Takes the lock if it is free (or stale); undefined when someone holds it. */
export function tryLock(file: string): HeldLock | undefined {
  const me: Holder = { host: os.hostname(), pid: process.pid, nonce: crypto.randomBytes(8).toString('hex') };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, `${me.host} ${me.pid} ${me.nonce}\n`, { flag: 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
        // Made but not written (a full disk): an empty lock would hold the others off until it is stale.
        if (fs.statSync(file, { throwIfNoEntry: false })?.size === 0) fs.rmSync(file, { force: true });
        throw e;
      }
      const h = readHolder(file);
      if (h && !isStale(h.holder, h.mtimeMs)) return undefined;
      if (h) takeAway(file, h.holder);
      continue;
    }
    const timer = setInterval(() => {
      const now = new Date();
      try {
        fs.utimesSync(file, now, now);
      } catch {
        // taken away (stale judged wrongly): the fill goes on, safely
      }
    }, REFRESH_MS);
    timer.unref();
    return {
      release: () => {
        clearInterval(timer);
        if (readHolder(file)?.holder.nonce === me.nonce) fs.rmSync(file, { force: true });
      },
    };
  }
  return undefined;
}

/** Waits until the lock is ours, or `maxMs` passed (then undefined: go on without it). */
export async function lock(file: string, maxMs: number): Promise<HeldLock | undefined> {
  const t0 = Date.now();
  for (let wait = 50; Date.now() - t0 < maxMs; wait = Math.min(500, wait * 1.5)) {
    const held = tryLock(file);
    if (held) return held;
    await new Promise((r) => setTimeout(r, wait));
  }
  return undefined;
}
