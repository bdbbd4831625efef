/**
 * One runner for the commands a build runs (a package manager's install, an app's install scripts,
 * a site generator, CC_BUILD_COMMAND, Composer): the child's stdout and stderr stream into the build
 * log as they come, whole lines only, with every secret of its environment masked (lib/mask.ts);
 * the caller gets the exit status, how long it took, and the end of the (masked) output to name
 * the cause of a failure. The runner decides nothing about failure: each caller has its own error.
 */
import { execa } from 'execa';
import type { Logger } from './log.ts';
import { maskedLines, maskSecrets } from './mask.ts';

export interface StepOptions {
  cwd: string;
  /** The child's whole environment (nothing of the builder's own is added). Its secrets are masked. */
  env: Record<string, string>;
  log: Logger;
  /** Put before each line of output (node indents its tools' output). */
  indent?: string;
  /** How many characters of the output's end the result keeps; default 16 KiB. */
  keep?: number;
  /** What the live line says while it runs (a terminal's log); default the command. */
  title?: string;
}

export interface StepResult {
  /** The exit code; undefined when the program could not start or was killed by a signal. */
  exitCode: number | undefined;
  signal?: string;
  /** Exit code 0. */
  ok: boolean;
  /** `exit 2`, `signal SIGKILL`, `could not start` (for messages). */
  status: string;
  /** The end of the output, masked as it was shown. */
  output: string;
  ms: number;
}

export async function runStep(argv: string[], o: StepOptions): Promise<StepResult> {
  const t0 = performance.now();
  const keep = o.keep ?? 16_384;
  let output = '';
  const emit = (text: string) => {
    output = (output + text).slice(-keep);
    o.log.raw(o.indent ? text.replace(/^(?=.)/gm, o.indent) : text);
  };
  // One line writer per stream: a line half-written on stdout is never glued to one from stderr.
  const out = maskedLines(o.env, emit);
  const err = maskedLines(o.env, emit);
  // On a terminal, a line that says it still runs (an install can be quiet for a minute).
  const shown = argv[0] === '/bin/sh' && argv[1] === '-c' ? argv[2]! : argv.map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ');
  const activity = o.log.track(o.title ?? maskSecrets(shown, o.env));
  const child = execa(argv[0]!, argv.slice(1), { cwd: o.cwd, env: o.env, extendEnv: false, reject: false, stdin: 'ignore', buffer: false });
  child.stdout.on('data', (d: Buffer) => out.write(d));
  child.stderr.on('data', (d: Buffer) => err.write(d));
  const r = await child;
  activity.end();
  for (const w of [out, err]) {
    w.end();
    // A last line without its newline is ended, so what follows starts on its own line.
    if (output && !output.endsWith('\n')) emit('\n');
  }
  const signal = r.signal ?? undefined;
  const started = r.exitCode !== undefined || signal !== undefined;
  if (!started) o.log.line(maskSecrets(r.shortMessage ?? `cannot run ${argv[0]}`, o.env));
  return {
    exitCode: r.exitCode,
    ...(signal ? { signal } : {}),
    ok: r.exitCode === 0,
    status: r.exitCode !== undefined ? `exit ${r.exitCode}` : signal ? `signal ${signal}` : 'could not start',
    output,
    ms: performance.now() - t0,
  };
}
