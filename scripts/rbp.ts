// rbp's program, bundled into dist/rbp.bundle.cjs, which dist/rbp.js runs (scripts/build.mjs).
import { EXIT } from '../lib/cnb/exit.ts';
import { main } from '../lib/platform/cli.ts';

// A closed pipe (`rbp run --dry-run | head`) is how a reader says it has seen enough: stop writing
// there, quietly. Any other stream error is a bug and goes on to the handler below.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED') return;
    throw e;
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`rbp: internal error (a bug in rbp, please report it):\n${e instanceof Error ? e.stack : String(e)}\n`);
    process.exitCode = EXIT.bug;
  },
);
