// rbp's program, bundled into dist/rbp.bundle.cjs, which dist/rbp.js runs (scripts/build.mjs).
import type { Writable } from 'node:stream';
import { EXIT } from '../lib/cnb/exit.ts';
import { takeBackExtraCa } from '../lib/cnb/extra-ca.ts';
import { main } from '../lib/platform/cli.ts';
import { directOutput } from '../lib/platform/cli-output.ts';

// dist/rbp deferred NODE_EXTRA_CA_CERTS: back into the environment before anything reads it or
// starts a process (lib/cnb/extra-ca.ts).
takeBackExtraCa();

// A closed pipe (`rbp run --dry-run | head`) is how a reader says it has seen enough: stop writing
// there, quietly. Any other stream error is a bug and goes on to the handler below.
const quietOnEpipe = (stream: Writable): Writable =>
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED') return;
    throw e;
  });
let stdout: Writable | undefined;
let stderr: Writable | undefined;
const stdoutStream = () => (stdout ??= quietOnEpipe(process.stdout));
const stderrStream = () => (stderr ??= quietOnEpipe(process.stderr));

// The commands that only print (a platform runs `rbp detect` on every build) write to a pipe or a
// file directly, without the cost of Node.js's streams for it (lib/platform/cli-output.ts).
const argv = process.argv.slice(2);
const printing = [undefined, 'detect', 'version', '--version', '-V', 'help', '--help', '-h'].includes(argv[0]);
const streams = printing
  ? { stdout: directOutput(1, stdoutStream), stderr: directOutput(2, stderrStream) }
  : { stdout: stdoutStream(), stderr: stderrStream() };

main(argv, streams).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    // Through the same output as the log: it comes after the lines written before it.
    streams.stderr.write(`rbp: internal error (a bug in rbp, please report it):\n${e instanceof Error ? e.stack : String(e)}\n`);
    process.exitCode = EXIT.bug;
  },
);
