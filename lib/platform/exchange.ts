/**
 * Two folders swap names in one step: renameat2(2) with RENAME_EXCHANGE, the switch of OUT to a new
 * build that no reader can see half done (a reader of OUT finds the old folder or the new one,
 * never neither). Node.js has no renameat2: util-linux's `exch` (2.40+) makes the call where it
 * exists, else Perl's `syscall` does (perl-base is Essential on Debian and Ubuntu), with the system
 * call's number for this machine's architecture.
 */
import { spawnSync } from 'node:child_process';
import { finished } from '../child-result.ts';
import os from 'node:os';
import { findOnPath } from '../fsx.ts';

/** renameat2's number per architecture (Linux's syscall tables; the generic table's for arm64, riscv64, loong64). */
const RENAMEAT2: Partial<Record<string, number>> = { x64: 316, ia32: 353, arm: 382, arm64: 276, riscv64: 276, loong64: 276, ppc64: 357, s390x: 347 };

const AT_FDCWD = -100;
const RENAME_EXCHANGE = 2;

/** Swaps `a` and `b` (both exist, on one file system). Returns undefined when done, else why it could not. */
export function exchange(a: string, b: string, pathVar = process.env.PATH): string | undefined {
  const exch = findOnPath('exch', pathVar);
  if (exch) {
    const r = spawnSync(exch, ['--', a, b], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    if (r.status === 0) return undefined;
  }
  const nr = RENAMEAT2[os.arch()];
  const perl = findOnPath('perl', pathVar);
  if (os.platform() !== 'linux' || nr === undefined) return `no renameat2 for ${os.platform()}/${os.arch()}`;
  if (!perl) return 'neither exch (util-linux 2.40+) nor perl is on PATH';
  const script = `syscall(${nr}, ${AT_FDCWD}, $ARGV[0], ${AT_FDCWD}, $ARGV[1], ${RENAME_EXCHANGE}) == 0 or die "renameat2: $!\\n"`;
  const r = finished(spawnSync(perl, ['-e', script, a, b], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' }));
  if (r.status === 0) return undefined;
  return (r.stderr ?? '').trim().split('\n')[0] || (r.error ? r.error.message : `exit ${r.status ?? r.signal}`);
}
