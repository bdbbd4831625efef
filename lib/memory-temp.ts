/**
 * Where files that hold a secret go when a file cannot be avoided (the platform's env files, which
 * the Buildpack API defines as files; a private SSH key, which ssh reads from a file): a folder on
 * a memory-backed file system, so that a SIGKILL or a power cut leaves nothing on disk. The first of
 * `$XDG_RUNTIME_DIR` (per user, 0700, tmpfs under systemd) and `/dev/shm` that is a tmpfs (or
 * ramfs) this user may write; else the system temp folder, which may be a disk (README says so).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface MemoryTempRoot {
  dir: string;
  /** True when `dir` is on a memory-backed file system. */
  memory: boolean;
}

export interface Mount {
  point: string;
  memory: boolean;
}

/** The mounts of /proc/self/mounts (none when it cannot be read). */
function mounts(): Mount[] {
  let text: string;
  try {
    text = fs.readFileSync('/proc/self/mounts', 'utf8');
  } catch {
    return [];
  }
  const out: Mount[] = [];
  for (const line of text.split('\n')) {
    const [, point, type] = line.split(' ');
    // Mount points escape spaces and the like as octal (\040).
    if (point && type)
      out.push({ point: point.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))), memory: type === 'tmpfs' || type === 'ramfs' });
  }
  return out;
}

/** True when `dir` (a real path) is on a memory-backed file system: the longest mount point that holds it decides. */
export function onMemory(dir: string, all: Mount[]): boolean {
  const holds = (p: string) => dir === p || dir.startsWith(p.endsWith('/') ? p : `${p}/`);
  let best: Mount | undefined;
  // A later mount on the same point hides the earlier one, hence >=.
  for (const m of all) if (holds(m.point) && (!best || m.point.length >= best.point.length)) best = m;
  return best?.memory ?? false;
}

let decided: MemoryTempRoot | undefined;

export function memoryTempRoot(env: NodeJS.ProcessEnv = process.env): MemoryTempRoot {
  if (decided) return decided;
  const all = mounts();
  for (const candidate of [env.XDG_RUNTIME_DIR, '/dev/shm']) {
    if (!candidate || !path.isAbsolute(candidate)) continue;
    try {
      const real = fs.realpathSync(candidate);
      fs.accessSync(real, fs.constants.W_OK | fs.constants.X_OK);
      if (onMemory(real, all)) return (decided = { dir: real, memory: true });
    } catch {
      // missing or not ours to write
    }
  }
  const tmp = os.tmpdir();
  let real = tmp;
  try {
    real = fs.realpathSync(tmp);
  } catch {
    // keep the name as given
  }
  return (decided = { dir: tmp, memory: onMemory(real, all) });
}
