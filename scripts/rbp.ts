import module from 'node:module';

// Node.js >= 22.1 can keep V8's compiled code of rbp's modules between runs (in its cache folder,
// NODE_COMPILE_CACHE or <tmp>/node-compile-cache), as npm does: every later rbp starts with less to
// compile. It must be on before the modules load, hence the dynamic import below. A no-op on Node 20.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
const { EXIT, main } = await import('./rbp-main.ts');

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
