/**
 * Progress on steps longer than a second: on a terminal, a live line under the step,
 * redrawn every second with the time so far and erased when it ends; in a file or a pipe, no control
 * characters, one result line per step. The logger with a terminal-like stream, the command runner,
 * and rbp itself in a pseudo-terminal (`script`), where the buildpack's own steps draw through rbp.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Logger } from '../../lib/log.ts';
import { runStep } from '../../lib/run-step.ts';
import { RBP, tmpDir } from '../helpers/rbp.ts';
import { realTool } from '../helpers/tool-cache.ts';

/** A stream that says it is a terminal (or not) and keeps what is written. */
function stream(tty: boolean): Writable & { text: () => string } {
  let text = '';
  const w = new Writable({
    write: (c, _e, cb) => {
      text += String(c);
      cb();
    },
  }) as Writable & { text: () => string; isTTY?: boolean; columns?: number };
  if (tty) Object.assign(w, { isTTY: true, columns: 80 });
  w.text = () => text;
  return w;
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('live progress', () => {
  it('on a terminal: a live line once a step has run a second, erased before what follows', async () => {
    const out = stream(true);
    const log = new Logger({ out, color: false, level: 'normal' });
    expect(log.live).toBe(true);
    await log.step('unpacking', () => wait(2300));
    const text = out.text();
    expect(text.startsWith('- unpacking\n')).toBe(true);
    // At least one live line (how many depends on how busy the machine is), each with the time so far.
    expect(text.match(/\r\u001b\[2K {2}… unpacking \(\d+\.\ds\)/g)?.length ?? 0).toBeGreaterThanOrEqual(1);
    // Erased before the result line, which starts a line of its own.
    expect(text).toMatch(/\r\u001b\[2K {2}- done \(\d+\.\ds\)\n$/);
  });

  it('in a file or a pipe: no control characters, one result line for the step', async () => {
    const out = stream(false);
    const log = new Logger({ out, color: false, level: 'normal' });
    expect(log.live).toBe(false);
    await log.step('unpacking', () => wait(1200));
    expect(out.text()).toMatch(/^- unpacking\n {2}- done \(\d+\.\ds\)\n$/);
  });

  it('a command the build runs (an install, a generator) shows it is still running; its output erases the live line first', async () => {
    const out = stream(true);
    const log = new Logger({ out, color: false, level: 'normal' });
    const r = await runStep(['/bin/sh', '-c', 'echo first; sleep 1.6; echo second'], { cwd: tmpDir(), env: { PATH: process.env.PATH! }, log });
    expect(r.ok).toBe(true);
    const text = out.text();
    expect(text).toMatch(/^first\n\r\u001b\[2K {2}… echo first; sleep 1\.6; echo second \(\d+\.\ds\)\r\u001b\[2Ksecond\n$/);
    // --quiet shows nothing as it goes.
    const quiet = stream(true);
    expect(new Logger({ out: quiet, level: 'quiet' }).live).toBe(false);
  });
});

const sws = realTool('RBP_TOOL_STATIC_WEB_SERVER', 'live progress through rbp (a static site whose build command takes 2 s)');

describe.skipIf(sws.skip || !fs.existsSync('/usr/bin/script'))('through rbp on a terminal', () => {
  it("the buildpack's step draws its live line through rbp (RBP_LOG_LIVE); piped, rbp's log has none", async () => {
    const app = tmpDir('rbp-progress-app-');
    fs.writeFileSync(path.join(app, 'index.html'), 'hi');
    const out = path.join(tmpDir('rbp-progress-'), 'out');
    const argv = ['node', '--', RBP, 'build', app, '--out', out, '--type', 'static', '--env', 'CC_BUILD_COMMAND=sleep 2'];
    const env = { RBP_TOOL_STATIC_WEB_SERVER: sws.path(), NO_COLOR: '1' };
    // `script` runs rbp on a pseudo-terminal and copies what it shows.
    const tty = await execa('script', ['-qec', argv.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' '), '/dev/null'], { env, reject: false });
    expect(tty.exitCode, tty.stdout).toBe(0);
    expect(tty.stdout).toMatch(/\r\u001b\[2K {2}… sleep 2 \(\d+\.\ds\)/);
    const piped = await execa(argv[0]!, argv.slice(1), { env, reject: false, all: true });
    expect(piped.exitCode, piped.all).toBe(0);
    expect(piped.all).not.toContain('\u001b[2K');
    expect(piped.all).toMatch(/- running CC_BUILD_COMMAND: sleep 2\n {2}- done \(\d+\.\ds\)/);
  }, 120_000);
});
