/**
 * A small file system of a test's own (a tmpfs of a few MiB), where writes run out of room as on a
 * full disk. Mounted here when this process may mount (root with CAP_SYS_ADMIN); else in a user and
 * mount namespace (`unshare -rm`) that a process of the test holds, where the test's commands then
 * run (nsenter). Where neither is allowed, the tests that need one are skipped outside CI with the
 * reason (requirement.ts).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { execa, type Options, type Result } from 'execa';
import { tmpDir } from './rbp.ts';
import { requirement, type Requirement } from './requirement.ts';

export type MountWay = 'here' | 'namespace';

/** How this process can mount a tmpfs, tried once for real: here, in a user namespace, or not at all. */
export function smallFsRequirement(who: string): Requirement<MountWay> {
  const dir = tmpDir('rbp-mount-probe-');
  const tmpfs = ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir];
  let way: MountWay | undefined;
  if (spawnSync('mount', tmpfs, { stdio: 'ignore' }).status === 0) {
    spawnSync('umount', [dir], { stdio: 'ignore' });
    way = 'here';
  } else if (spawnSync('unshare', ['-rm', 'mount', ...tmpfs], { stdio: 'ignore' }).status === 0) way = 'namespace';
  fs.rmSync(dir, { recursive: true, force: true });
  return requirement(way, {
    what: 'a way to mount a small tmpfs (as root, or in a user namespace with unshare -rm)',
    how: 'run the tests as root, or allow unprivileged user namespaces (sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone)',
    who,
  });
}

export interface SmallFs {
  /** Its mount point. */
  dir: string;
  /** Runs a command where the file system is seen (in its namespace, when that is where it is). */
  run(file: string, args: string[], opts?: Options): Promise<Result>;
  /** `p`, a path in it, as this process reads it (through the holder's /proc/<pid>/root in a namespace). */
  seen(p: string): string;
  /** A new size: a tmpfs grows or shrinks in place, its files kept. */
  resize(size: string): Promise<void>;
  /** Unmounts it, or ends the process that holds its namespace. */
  close(): Promise<void>;
}

/** Mounts a tmpfs of `size` (`12m`) the way `way` says; `readOnly` mounts it read-only. */
export async function mountSmallFs(way: MountWay, size: string, readOnly = false): Promise<SmallFs> {
  const dir = tmpDir('rbp-small-fs-');
  const options = `${readOnly ? 'ro,' : ''}size=${size}`;
  const remount = (s: string) => ['-t', 'tmpfs', '-o', `remount,${readOnly ? 'ro,' : ''}size=${s}`, 'tmpfs', dir];
  if (way === 'here') {
    await execa('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir]);
    return {
      dir,
      run: (file, args, opts = {}) => execa(file, args, opts),
      seen: (p) => p,
      resize: async (s) => {
        await execa('mount', remount(s));
      },
      close: async () => {
        await execa('umount', [dir]);
      },
    };
  }
  // The holder: the namespace lives as long as it does.
  const holder = spawn('unshare', ['-rm', 'sh', '-c', 'mount -t tmpfs -o "$1" tmpfs "$2" && echo ready && exec sleep 86400', 'sh', options, dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    holder.stdout.once('data', () => resolve());
    holder.once('exit', (code) => reject(new Error(`unshare -rm could not mount a tmpfs at ${dir} (exit ${code})`)));
  });
  const pid = holder.pid!;
  const inside = (file: string, args: string[], opts: Options = {}) =>
    execa('nsenter', ['-t', String(pid), '-U', '-m', '--preserve-credentials', `--wd=${String(opts.cwd ?? process.cwd())}`, '--', file, ...args], opts);
  return {
    dir,
    run: inside,
    seen: (p) => path.join(`/proc/${pid}/root`, p),
    resize: async (s) => {
      await inside('mount', remount(s));
    },
    close: async () => {
      if (holder.exitCode !== null || holder.signalCode !== null) return;
      const exited = new Promise((r) => holder.once('exit', r));
      process.kill(pid, 'SIGTERM');
      await exited;
    },
  };
}
