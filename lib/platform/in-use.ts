/**
 * Which OUTs a running app uses: `rbp run` and `rbp deploy` write `<OUT>.rbp-run/<pid>` for as long
 * as they (or the app they became with execve: the same pid) run, and remove it when they end; `rbp
 * prune` keeps every OUT with a live mark. An app started some other way (its launch entrypoint run
 * by hand, a container that mounts OUT) is not known: README says so.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pidAlive } from '../pid.ts';

export const runDirOf = (out: string) => `${path.resolve(out)}.rbp-run`;

/**
 * Marks OUT in use by this process until it exits, or by `pid`, the process rbp run hands its place
 * to (handoff.ts): that mark stays, as one kept across execve does, and counts while the pid lives.
 * Never fails: a mark that cannot be written is skipped.
 */
export function markInUse(out: string, pid = process.pid): void {
  const file = path.join(runDirOf(out), String(pid));
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${new Date().toISOString()}\n`);
  } catch {
    return;
  }
  if (pid !== process.pid) return;
  process.once('exit', () => {
    try {
      fs.rmSync(file, { force: true });
      fs.rmdirSync(path.dirname(file));
    } catch {
      // another run still marks it, or it is gone
    }
  });
}

/** The live processes that mark OUT in use (stale marks of dead ones are ignored). */
export function usersOf(out: string): number[] {
  let names: string[];
  try {
    names = fs.readdirSync(runDirOf(out));
  } catch {
    return [];
  }
  return names.map(Number).filter((pid) => Number.isInteger(pid) && pid > 0 && pidAlive(pid));
}
