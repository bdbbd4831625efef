/**
 * The build gate, the buildpack's side (rbp's side: lib/platform/build-gate.ts, which says why).
 * rbp may start our bin/build before it has restored the layers; it then passes a pipe as fd
 * GATE_FD, named by GATE_VAR, and writes GATE_OPEN once the layers are ready. runBuild
 * (context.ts) makes what needs no layer first (the context from the plan and the environment),
 * then waits here (the stdio streams made meanwhile), then builds. The pipe closing without the byte means the
 * build was called off (rbp failed before it, or died): the process exits without a word.
 * Without the variable (the reference lifecycle, pack) nothing waits. A variable that names no
 * pipe (set by hand) is ignored; neither the variable nor the fd goes on to what the build starts.
 */
import fs from 'node:fs';

export const GATE_VAR = 'RBP_BUILD_GATE';
export const GATE_FD = 3;
export const GATE_OPEN = '1';
/** The first line of a lib/build.cjs whose program waits (scripts/build.mjs writes the same text). */
export const GATE_MARK = '// rbp-build-gate: 1';

/** Waits until rbp opens the gate; exits (0, quietly) when it closes it instead. */
export function waitAtGate(env: NodeJS.ProcessEnv = process.env): void {
  const given = env[GATE_VAR];
  if (given === undefined) return;
  delete env[GATE_VAR];
  if (given !== String(GATE_FD) || !isPipe(GATE_FD)) return;
  makeStdio();
  const byte = Buffer.alloc(1);
  let n = 0;
  for (;;) {
    try {
      n = fs.readSync(GATE_FD, byte, 0, 1, null);
      break;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // A pipe made non-blocking by whoever shares it: wait a little and read again.
      if (code === 'EAGAIN') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
      else if (code !== 'EINTR') break;
    }
  }
  fs.closeSync(GATE_FD);
  if (n !== 1 || byte.toString() !== GATE_OPEN) process.exit(0);
}

/** Makes process.stdout and stderr, which Node.js makes at their first use (~9 ms for pipes). */
function makeStdio(): void {
  process.stdout.setDefaultEncoding('utf8');
  process.stderr.setDefaultEncoding('utf8');
}

function isPipe(fd: number): boolean {
  try {
    const st = fs.fstatSync(fd);
    return st.isFIFO() || st.isSocket();
  } catch {
    return false;
  }
}
