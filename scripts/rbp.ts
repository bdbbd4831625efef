import { EXIT } from '../lib/cnb/exit.ts';
import { main } from '../lib/platform/cli.ts';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`rbp: internal error (a bug in rbp, please report it):\n${e instanceof Error ? e.stack : String(e)}\n`);
    process.exitCode = EXIT.bug;
  },
);
