import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Logger } from './log.ts';
import { runStep } from './run-step.ts';

function logger(): { log: Logger; text: () => string } {
  const out = new PassThrough();
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString()));
  return { log: new Logger({ out, color: false, level: 'normal' }), text: () => text };
}

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', NPM_TOKEN: 'npm_TOKENVALUE123' };

describe('runStep: one runner for build commands', () => {
  it('streams stdout and stderr with the secrets of the child environment masked, even split across writes', async () => {
    const { log, text } = logger();
    // Two writes with a pause between them: the token reaches the runner in two chunks.
    const script =
      'printf "token npm_TOKEN"; sleep 0.2; printf "VALUE123 end\\n"; printf "to stderr $NPM_TOKEN" >&2; printf "last"; sleep 0.1; echo " line" >&2';
    const r = await runStep(['/bin/sh', '-c', script], { cwd: process.cwd(), env, log, indent: '  > ' });
    expect(r).toMatchObject({ exitCode: 0, ok: true, status: 'exit 0' });
    expect(text()).toBe('  > token *** end\n  > to stderr *** line\n  > last\n');
    expect(r.output).toBe('token *** end\nto stderr *** line\nlast\n');
    expect(r.ms).toBeGreaterThanOrEqual(150);
  });

  it('gives the exit status, a signal, or that the program could not start', async () => {
    const { log, text } = logger();
    const failed = await runStep(['/bin/sh', '-c', 'echo no; exit 3'], { cwd: process.cwd(), env, log });
    expect(failed).toMatchObject({ exitCode: 3, ok: false, status: 'exit 3', output: 'no\n' });
    const killed = await runStep(['/bin/sh', '-c', 'kill -9 $$'], { cwd: process.cwd(), env, log });
    expect(killed).toMatchObject({ exitCode: undefined, signal: 'SIGKILL', ok: false, status: 'signal SIGKILL' });
    const missing = await runStep(['/nonexistent/tool', '--version'], { cwd: process.cwd(), env, log });
    expect(missing).toMatchObject({ exitCode: undefined, ok: false, status: 'could not start' });
    expect(text()).toContain('ENOENT');
  });

  it('keeps only the end of a long output', async () => {
    const { log } = logger();
    const r = await runStep(['/bin/sh', '-c', 'i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i+1)); done'], { cwd: process.cwd(), env, log, keep: 100 });
    expect(r.output.length).toBeLessThanOrEqual(101);
    expect(r.output.endsWith('line 1999\n')).toBe(true);
  });
});
