/**
 * The build gate: rbp starts its own buildpack's bin/build before restore has checked the layers,
 * so that the program's Node.js start and bundle load (~80 ms of a warm rebuild, on another core)
 * overlap the check, and the program waits, before it reads anything, until rbp says the layers are
 * ready. The buildpack sees the same layers, plan and environment as without the gate; only the
 * time of its start moves.
 *
 * The protocol (the buildpack's side: lib/cnb/build-gate.ts): rbp passes a pipe as the process's fd
 * GATE_FD and names it in GATE_VAR; the program loads its bundle, makes what needs no layer, then
 * reads one byte: GATE_OPEN lets it build, the pipe closing without it (rbp called the build off,
 * or died) makes it exit without a word. A program says it keeps the protocol by the first line of
 * its lib/build.cjs (GATE_MARK, the same text as scripts/build.mjs writes): another buildpack, or
 * one of ours built before the gate, is started when its turn comes, as always.
 */
import fs from 'node:fs';
import path from 'node:path';
import { GATE_MARK } from '../cnb/build-gate.ts';
import { firstLine } from '../fsx.ts';

export { GATE_FD, GATE_OPEN, GATE_VAR } from '../cnb/build-gate.ts';
/** The line our bin/build bootstrap ends with: the program it runs is lib/build.cjs. */
const RUNS_PROGRAM = 'exec "$node" "$bp/lib/build.cjs" "$@"';

/** Whether the buildpack in `dir` runs a bin/build that waits at the gate. */
export function waitsAtGate(dir: string): boolean {
  if (firstLine(path.join(dir, 'lib', 'build.cjs')) !== GATE_MARK) return false;
  try {
    return fs.readFileSync(path.join(dir, 'bin', 'build'), 'utf8').includes(RUNS_PROGRAM);
  } catch {
    return false;
  }
}
