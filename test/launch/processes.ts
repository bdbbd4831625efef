/**
 * The processes of a launch, read from /proc: the tree under a pid, a member found by its command
 * line, whether any of them is still there.
 */
import fs from 'node:fs';

function stat(pid: number): { ppid: number; state: string } | undefined {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0]!, ppid: Number(rest[1]) };
  } catch {
    return undefined;
  }
}

export function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/** Every process below `pid` (not itself), with its command line. */
export function descendants(pid: number): { pid: number; cmd: string; state: string; ppid: number }[] {
  const all = fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map((e) => ({ pid: Number(e), ...stat(Number(e)) }))
    .filter((p): p is { pid: number; ppid: number; state: string } => p.ppid !== undefined);
  const out: { pid: number; cmd: string; state: string; ppid: number }[] = [];
  const walk = (parent: number) => {
    for (const p of all.filter((x) => x.ppid === parent)) {
      out.push({ ...p, cmd: cmdline(p.pid) });
      walk(p.pid);
    }
  };
  walk(pid);
  return out;
}

/** The pid of the process below `root` whose command line matches, once there is one. */
export async function member(root: number, match: RegExp, timeoutMs = 20_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = descendants(root).find((p) => match.test(p.cmd) && p.state !== 'Z');
    if (found) return found.pid;
    if (Date.now() > deadline) throw new Error(`no process matching ${match} under ${root}: ${JSON.stringify(descendants(root))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The pids of `pids` that still run (not ended, not a zombie), after waiting up to `ms` for them to go. */
export async function stillRunning(pids: number[], ms = 3000): Promise<number[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = pids.filter((p) => {
      const s = stat(p);
      return s !== undefined && s.state !== 'Z' && s.state !== 'X';
    });
    if (!left.length || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}
