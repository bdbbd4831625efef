/**
 * One build at a time per OUT and per cache: `<dir>.rbp-lock` holds the builder's pid (then the
 * process group of the buildpack it runs). It is made with O_EXCL, so exactly one build takes it; a
 * lock whose builder is gone is taken over, after the buildpack that builder left running (killed
 * with SIGKILL, it could not stop it) is stopped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.ts';
import { pidAlive } from '../pid.ts';
import { lockOf, realish } from './out-paths.ts';

function readLock(dir: string): { pid: number; group?: number } | undefined {
  let text: string;
  try {
    text = fs.readFileSync(lockOf(dir), 'utf8');
  } catch {
    return undefined;
  }
  const [pid, group] = text.split('\n').map((l) => Number(l.trim()));
  return { pid: pid ?? NaN, ...(group ? { group } : {}) };
}

/** The pid in the lock of `dir` when that process still runs (and is not this one). */
export function lockHolder(dir: string): number | undefined {
  const pid = readLock(dir)?.pid;
  return pid !== undefined && pidAlive(pid) && pid !== process.pid ? pid : undefined;
}

/**
 * The buildpack a killed builder left: its process group, when its members still work inside OUT
 * (as the buildpack saw it), so that a reused group id of an unrelated program is left alone.
 */
export function stopOrphans(out: string): void {
  const group = readLock(out)?.group;
  if (!group) return;
  const inside = [out, realish(out)];
  let members: number[];
  try {
    members = fs
      .readdirSync('/proc')
      .filter((n) => /^\d+$/.test(n))
      .map(Number)
      .filter((pid) => {
        try {
          const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
          // pgrp is the 3rd field after the command, which is in parentheses and may hold spaces.
          const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
          const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
          return pgrp === group && inside.some((dir) => cwd === dir || cwd.startsWith(`${dir}/`));
        } catch {
          return false;
        }
      });
  } catch {
    return; // no /proc
  }
  if (members.length === 0) return;
  try {
    process.kill(-group, 'SIGKILL');
  } catch {
    // gone meanwhile
  }
}

/** Takes the lock of `dir` (`what`: `--out` or `--cache`, for the errors), or says who holds it. */
export function takeLock(dir: string, what: string): void {
  const file = lockOf(dir);
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
  } catch {
    // reported by the write below
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      return;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') {
        throw new UserError({
          id: 'platform/out/unusable',
          title: `${what === '--out' ? 'OUT' : 'The cache'} cannot be used`,
          seen: { what, value: dir },
          rule: `rbp writes ${path.basename(file)} beside it (one build at a time); that failed (${code ?? (e as Error).message}).`,
          fix: 'Use a folder with a shorter name, in a folder you may write.',
        });
      }
    }
    const holder = lockHolder(dir);
    if (holder !== undefined) {
      throw new UserError({
        id: 'platform/out/locked',
        title: `Another build ${what === '--out' ? 'into OUT' : 'with this cache'} is running`,
        seen: { what, value: dir, where: `process ${holder}` },
        rule: `One build at a time writes into an OUT folder${what === '--out' ? '' : ' or a cache'}.`,
        fix: `Wait for process ${holder} to finish, or build into another ${what}.`,
      });
    }
    // Stale: its builder is gone. Removing it is safe: `wx` decides who takes it next.
    stopOrphans(dir);
    fs.rmSync(file, { force: true });
  }
  throw new Error(`could not take the lock ${file}`);
}

/** Records the process group of the buildpack now running, for the next rbp if this one is killed. */
export function recordGroup(dir: string, pgid: number | undefined): void {
  try {
    if (readLock(dir)?.pid === process.pid) fs.writeFileSync(lockOf(dir), `${process.pid}\n${pgid ?? ''}\n`);
  } catch {
    // the lock stays valid without it
  }
}

export function releaseLock(dir: string): void {
  try {
    if (readLock(dir)?.pid === process.pid) fs.rmSync(lockOf(dir), { force: true });
  } catch {
    // already gone
  }
}
