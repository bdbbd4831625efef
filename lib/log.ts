/**
 * The build log: a section per phase and buildpack, steps with their duration, warnings, and a
 * closing summary. Output goes to a stream (stdout by default); warnings and errors go to `err`
 * (the same stream unless given: a buildpack's whole output is its build log). `NO_COLOR` turns
 * colours off, and so does a stream that is not a terminal.
 *
 * Levels: `quiet` holds back everything but warnings and errors (the caller may print what was held
 * when something fails), `verbose` adds `debug` lines. The default level is `RBP_LOG_LEVEL`, which rbp
 * sets for the buildpacks it runs.
 */
import { raw } from './config/read.ts';
import type { Writable } from 'node:stream';
import { renderUserError, type UserErrorData } from './errors.ts';

export function useColor(stream: { isTTY?: boolean } = process.stdout, env = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return true;
  return Boolean(stream.isTTY);
}

const codes = { bold: [1, 22], dim: [2, 22], red: [31, 39], yellow: [33, 39], green: [32, 39], cyan: [36, 39] } as const;
type Style = keyof typeof codes;

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return `${m}m${String(s).padStart(2, '0')}s`;
}

/** A size on disk: 512 B, 3.4 KiB, 190.2 MiB, 1.5 GiB. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(1)} ${units[u]}`;
}

export type LogLevel = 'quiet' | 'normal' | 'verbose';

export function logLevelOf(env: NodeJS.ProcessEnv = process.env): LogLevel {
  // Read leniently on purpose: the logger prints every user error, so it must never throw one;
  // an unknown level is the normal one (lib/config declares it so).
  const v = raw(env, 'RBP_LOG_LEVEL')?.toLowerCase();
  return v === 'quiet' || v === 'verbose' ? v : 'normal';
}

/** A step in progress (Logger.track): what the live line says, until it ends. */
export interface Activity {
  /** The step's own progress (`12.0 MiB of 49.1 MiB (24%)`), shown on the live line. */
  progress(text: string): void;
  end(): void;
}

/**
 * Whether a log written to `out` draws live progress: a terminal, or a buildpack's output that rbp
 * shows on its terminal (rbp sets RBP_LOG_LIVE=1 for the buildpacks when its own log is live).
 */
export function isLive(out: Writable, env: NodeJS.ProcessEnv = process.env): boolean {
  if ((out as { isTTY?: boolean }).isTTY) return true;
  // rbp's stdout, asked by its descriptor: reading process.stdout would make the stream (cli-output.ts).
  return (out as { fd?: number }).fd === 1 && raw(env, 'RBP_LOG_LIVE') === '1';
}

export class Logger {
  private readonly out: Writable;
  private readonly err: Writable;
  private readonly color: boolean;
  private readonly indent: string;
  readonly level: LogLevel;
  /**
   * Steps longer than a second show a live line under their title, redrawn every second with the
   * time so far (and a download's bytes), erased when other output comes and when they end. Off
   * the log is a file or a pipe: there each step says once how long it took.
   */
  readonly live: boolean;
  /** What `quiet` held back, in order. */
  private readonly held: (Buffer | string)[] = [];
  private readonly activities: { title: string; t0: number; text?: string }[] = [];
  private ticker: NodeJS.Timeout | undefined;
  /** Whether the live line is on screen, and whether the cursor is at the start of a line. */
  private drawn = false;
  private atLineStart = true;

  constructor(opts: { out?: Writable; err?: Writable; color?: boolean; indent?: string; level?: LogLevel; live?: boolean } = {}) {
    this.out = opts.out ?? process.stdout;
    this.err = opts.err ?? this.out;
    this.color = opts.color ?? useColor(this.out as { isTTY?: boolean });
    this.indent = opts.indent ?? '';
    this.level = opts.level ?? logLevelOf();
    this.live = this.level !== 'quiet' && (opts.live ?? isLive(this.out));
  }

  private write(chunk: Buffer | string): void {
    if (this.level === 'quiet') return void this.held.push(chunk);
    this.emit(this.out, chunk);
  }

  /** Every write of the log goes here: the live line is erased first, and drawn again by the next tick. */
  private emit(stream: Writable, chunk: Buffer | string): void {
    this.erase();
    stream.write(chunk);
    if (stream === this.out) {
      const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8', Math.max(0, chunk.length - 1));
      if (text.length) this.atLineStart = text.endsWith('\n');
    }
  }

  private erase(): void {
    if (!this.drawn) return;
    this.out.write('\r\u001b[2K');
    this.drawn = false;
  }

  private draw(): void {
    const a = this.activities[this.activities.length - 1];
    if (!a || !this.atLineStart) return;
    const ms = performance.now() - a.t0;
    if (ms < 1000) return;
    const width = ((this.out as { columns?: number }).columns ?? 100) - 1;
    const line = `${this.indent}  … ${a.title}${a.text ? `: ${a.text}` : ''} (${formatDuration(ms)})`;
    this.out.write(`\r\u001b[2K${this.style('dim', line.length > width ? `${line.slice(0, width - 1)}…` : line)}`);
    this.drawn = true;
  }

  /**
   * A step starts: while it runs, the live line shows it (innermost step first) once it has taken a
   * second. Does nothing visible unless the log is live.
   */
  track(title: string): Activity {
    const a: { title: string; t0: number; text?: string } = { title, t0: performance.now() };
    this.activities.push(a);
    if (this.live && !this.ticker) {
      this.ticker = setInterval(() => {
        this.erase();
        this.draw();
      }, 1000);
      this.ticker.unref();
    }
    return {
      progress: (text) => {
        a.text = text;
      },
      end: () => {
        const i = this.activities.indexOf(a);
        if (i >= 0) this.activities.splice(i, 1);
        if (!this.activities.length && this.ticker) {
          clearInterval(this.ticker);
          this.ticker = undefined;
        }
        this.erase();
      },
    };
  }

  /** Prints what `quiet` held back (to the error stream): the log of a build that failed. */
  flushHeld(): void {
    for (const c of this.held.splice(0)) this.emit(this.err, c);
  }

  /** A line for `--verbose` only. */
  debug(text: string): void {
    if (this.level === 'verbose') this.emit(this.out, `${this.indent}${this.style('dim', `  . ${text}`)}\n`);
  }

  style(s: Style, text: string): string {
    if (!this.color) return text;
    const [a, b] = codes[s];
    return `\u001b[${a}m${text}\u001b[${b}m`;
  }

  /** Passes a child process's output through as it comes. */
  raw(chunk: Buffer | string): void {
    this.write(chunk);
  }

  line(text = ''): void {
    this.write(text === '' ? '\n' : `${this.indent}${text}\n`);
  }

  /** `## Title`: one per phase or buildpack. */
  section(title: string): void {
    this.line(this.style('bold', `## ${title}`));
  }

  /** `### Title`: a buildpack inside a phase. */
  subsection(title: string): void {
    this.line(this.style('bold', `### ${title}`));
  }

  info(text: string): void {
    this.line(`- ${text}`);
  }

  detail(text: string): void {
    this.line(`  - ${text}`);
  }

  warn(text: string): void {
    this.emit(this.err, `${this.indent}${this.style('yellow', `! WARNING ${text}`)}\n`);
  }

  error(e: UserErrorData): void {
    this.flushHeld(); // with --quiet, what led up to an error is shown before it
    for (const l of renderUserError(e).split('\n')) this.emit(this.err, `${this.indent}${this.style('red', l)}\n`);
  }

  /** A line that goes with an error (what it left behind), on the error stream. */
  errLine(text: string): void {
    this.flushHeld();
    this.emit(this.err, `${this.indent}${text}\n`);
  }

  /** A one-line failure (`ERROR: ...`), on the error stream. */
  fail(text: string): void {
    this.flushHeld();
    this.emit(this.err, `${this.indent}${this.style('red', `ERROR: ${text}`)}\n`);
  }

  /**
   * Runs one step, printing `- title` then `  - done (1.2s)` or `  - failed after 1.2s`; on a
   * terminal, a live line in between once it has run for a second.
   */
  async step<T>(title: string, fn: () => Promise<T> | T): Promise<T> {
    this.info(title);
    const t0 = performance.now();
    const activity = this.track(title);
    try {
      const r = await fn();
      activity.end();
      this.detail(`done (${formatDuration(performance.now() - t0)})`);
      return r;
    } catch (e) {
      activity.end();
      this.detail(`failed after ${formatDuration(performance.now() - t0)}`);
      throw e;
    }
  }
}
