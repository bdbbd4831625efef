/**
 * rbp's stdout and stderr for the commands that only print (detect, --version, help). Node.js makes
 * process.stdout, for a pipe or a socket, a net.Socket, whose first use loads net and the streams.
 * When the descriptor is a pipe, a socket or a file, these commands write to it directly instead, with
 * fs.writeSync (as process.stdout does there on Linux); anything else gets Node.js's own stream.
 * What is written in one turn of the event loop goes out at its end (or at exit) in one write per
 * descriptor, stdout's and stderr's in the order written.
 */
import fs from 'node:fs';
import type { Writable } from 'node:stream';

/** Writes `bytes` now; false once the reader has gone. */
type WriteNow = (bytes: Uint8Array) => boolean;

/** What is waiting to go out, as runs of one output's chunks, in the order written. */
const pending: { out: WriteNow; chunks: Uint8Array[] }[] = [];
let scheduled = false;
let exitHooked = false;

function flush(): void {
  scheduled = false;
  for (const run of pending.splice(0)) run.out(run.chunks.length === 1 ? run.chunks[0]! : Buffer.concat(run.chunks));
}

function queue(out: WriteNow, chunk: Uint8Array): void {
  const last = pending.at(-1);
  if (last?.out === out) last.chunks.push(chunk);
  else pending.push({ out, chunks: [chunk] });
  if (scheduled) return;
  scheduled = true;
  setImmediate(flush);
  if (!exitHooked) {
    exitHooked = true;
    // process.exit() (a signal's handler) ends rbp before the immediate runs.
    process.on('exit', flush);
  }
}

/**
 * The output on descriptor `fd` (only `write`, isTTY and fd: what Logger and the printing commands
 * use); `stream` gives Node.js's stream for it. A descriptor that cannot take a write now (EAGAIN)
 * hands this and every later write to the stream, in order; a reader that has gone (EPIPE) ends the
 * writing quietly.
 */
export function directOutput(fd: 1 | 2, stream: () => Writable): Writable {
  let direct: boolean;
  try {
    const st = fs.fstatSync(fd);
    direct = st.isFIFO() || st.isSocket() || st.isFile();
  } catch {
    direct = false;
  }
  if (!direct) return stream();
  let closed = false;
  let handedOver = false;
  const out: WriteNow = (bytes) => {
    if (closed) return false;
    if (handedOver) return stream().write(bytes);
    let rest = bytes;
    while (rest.length) {
      try {
        rest = rest.subarray(fs.writeSync(fd, rest));
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN') {
          handedOver = true;
          return stream().write(rest);
        }
        if (code === 'EPIPE') {
          closed = true;
          return false;
        }
        throw e;
      }
    }
    return true;
  };
  const write = (chunk: string | Uint8Array): boolean => {
    if (closed) return false;
    queue(out, typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    return true;
  };
  // Not a Writable: the commands given it call write() alone (lib/platform/cli.ts, commands/detect.ts, version.ts).
  return { fd, isTTY: false, write } as unknown as Writable;
}
