/**
 * The build log: a section per phase and buildpack, steps with their duration, warnings, and a
 * closing summary. Output goes to a stream (stdout by default). `NO_COLOR` turns colours off, and so
 * does a stream that is not a terminal.
 */
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

export class Logger {
  private readonly out: Writable;
  private readonly color: boolean;
  private readonly indent: string;

  constructor(opts: { out?: Writable; color?: boolean; indent?: string } = {}) {
    this.out = opts.out ?? process.stdout;
    this.color = opts.color ?? useColor(this.out as { isTTY?: boolean });
    this.indent = opts.indent ?? '';
  }

  style(s: Style, text: string): string {
    if (!this.color) return text;
    const [a, b] = codes[s];
    return `\u001b[${a}m${text}\u001b[${b}m`;
  }

  /** Passes a child process's output through as it comes. */
  raw(chunk: Buffer | string): void {
    this.out.write(chunk);
  }

  line(text = ''): void {
    this.out.write(text === '' ? '\n' : `${this.indent}${text}\n`);
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
    this.line(this.style('yellow', `! WARNING ${text}`));
  }

  error(e: UserErrorData): void {
    for (const l of renderUserError(e).split('\n')) this.line(this.style('red', l));
  }

  /** Runs one step, printing `- title` then `  - done (1.2s)` or `  - failed after 1.2s`. */
  async step<T>(title: string, fn: () => Promise<T> | T): Promise<T> {
    this.info(title);
    const t0 = performance.now();
    try {
      const r = await fn();
      this.detail(`done (${formatDuration(performance.now() - t0)})`);
      return r;
    } catch (e) {
      this.detail(`failed after ${formatDuration(performance.now() - t0)}`);
      throw e;
    }
  }
}
