/**
 * rbp detect, --version and help write to a pipe, a socket or a file directly, without making
 * Node.js's stream for it (lib/platform/cli-output.ts): the same bytes as through the stream, a
 * reader that goes away ends the writing quietly, and a non-blocking pipe that is full is waited for.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { RBP, tmpDir } from '../helpers/rbp.ts';

let app: string;
let expected: string;
beforeAll(async () => {
  app = tmpDir('rbp-output-app-');
  fs.writeFileSync(path.join(app, 'index.php'), '<?php echo "hi";\n');
  // Through a terminal-less /dev/null-free path: a file, which Node.js's own stream writes synchronously too.
  const file = path.join(tmpDir('rbp-output-file-'), 'out');
  const fd = fs.openSync(file, 'w');
  const r = spawnSync(process.execPath, ['--', RBP, 'detect', app], { stdio: ['ignore', fd, 'inherit'], env: { ...process.env, NO_COLOR: '1' } });
  fs.closeSync(fd);
  expect(r.status).toBe(0);
  expected = fs.readFileSync(file, 'utf8');
  expect(expected).toMatch(/^## Detect\n[\s\S]*- group: rbp\/phpserver@/);
});

describe("rbp detect's output", () => {
  it('goes to a pipe whole, without loading the net and stream modules', async () => {
    const dir = tmpDir('rbp-output-modules-');
    const hook = path.join(dir, 'hook.cjs');
    fs.writeFileSync(
      hook,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(path.join(dir, 'modules'))}, process.moduleLoadList.join('\\n')));\n`,
    );
    const r = await execa(process.execPath, ['-r', hook, '--', RBP, 'detect', app], { env: { NO_COLOR: '1' }, stripFinalNewline: false });
    expect(r.stdout).toBe(expected);
    const modules = fs.readFileSync(path.join(dir, 'modules'), 'utf8').split('\n');
    expect(modules).not.toContain('NativeModule net');
    expect(modules).not.toContain('NativeModule internal/streams/writable');
    // rbp build still writes through Node.js's streams: the same check sees them.
    await execa(process.execPath, ['-r', hook, '--', RBP, 'build', '--help'], { env: { NO_COLOR: '1' } });
    expect(fs.readFileSync(path.join(dir, 'modules'), 'utf8').split('\n')).toContain('NativeModule net');
  });

  it('ends quietly when the reader has gone (EPIPE)', async () => {
    // `true` exits at once: rbp writes to a pipe nobody reads.
    const r = await execa('sh', ['-c', `(sleep 0.2; "$0" -- "$1" detect "$2"; echo "rbp exit $?" >&2) | true`, process.execPath, RBP, app], { reject: false });
    expect(r.stderr.trim()).toBe('rbp exit 0');
  });

  it('waits for a non-blocking pipe that is full (EAGAIN), and writes everything in order', async () => {
    // A parent that made its pipe non-blocking and filled it, and reads only later.
    const script = `
import fcntl, os, subprocess, sys, time
r, w = os.pipe()
fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
filled = 0
try:
    while True:
        filled += os.write(w, b"x")
except BlockingIOError:
    pass
p = subprocess.Popen(sys.argv[1:], stdout=w, env=dict(os.environ, NO_COLOR="1"))
os.close(w)
time.sleep(0.5)
data = b""
while True:
    chunk = os.read(r, 65536)
    if not chunk:
        break
    data += chunk
sys.stdout.buffer.write(data[filled:])
sys.exit(p.wait())
`;
    const r = await execa('python3', ['-c', script, process.execPath, '--', RBP, 'detect', app], { reject: false, stripFinalNewline: false });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(expected);
  });
});
