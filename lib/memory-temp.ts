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
import { fileSystemOf } from './disk.ts';

export interface MemoryTempRoot {
  dir: string;
  /** True when `dir` is on a memory-backed file system. */
  memory: boolean;
}

/** Whether `dir` is on a memory-backed file system (the mount that holds it most closely decides). */
function onMemory(dir: string): boolean {
  const type = fileSystemOf(dir)?.type;
  return type === 'tmpfs' || type === 'ramfs';
}

let decided: MemoryTempRoot | undefined;

export function memoryTempRoot(env: NodeJS.ProcessEnv = process.env): MemoryTempRoot {
  if (decided) return decided;
  for (const candidate of [env.XDG_RUNTIME_DIR, '/dev/shm']) {
    if (!candidate || !path.isAbsolute(candidate)) continue;
    try {
      const real = fs.realpathSync(candidate);
      fs.accessSync(real, fs.constants.W_OK | fs.constants.X_OK);
      if (onMemory(real)) return (decided = { dir: real, memory: true });
    } catch {
      // missing or not ours to write
    }
  }
  const tmp = os.tmpdir();
  return (decided = { dir: tmp, memory: onMemory(tmp) });
}
