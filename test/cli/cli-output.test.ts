/**
 * rbp detect, --version and help write to a pipe, a socket or a file directly, without making
 * Node.js's stream for it (lib/platform/cli-output.ts): the same bytes as through the stream, a
 * reader that goes away ends the writing quietly, and a non-blocking pipe that is full is waited for.
 * What one turn of rbp's event loop writes goes out in one write, stdout's and stderr's in order.
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
  it("goes to a pipe whole, without making Node.js's stdout and stderr streams", async () => {
    const dir = tmpDir('rbp-output-streams-');
    const hook = path.join(dir, 'hook.cjs');
    // Records which of process.stdout and process.stderr (lazy getters that make the stream) are read.
    fs.writeFileSync(
      hook,
      `const used = [];
for (const name of ['stdout', 'stderr']) {
  const d = Object.getOwnPropertyDescriptor(process, name);
  Object.defineProperty(process, name, { configurable: true, enumerable: d.enumerable, get() { used.push(name); return d.get.call(process); } });
}
process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(path.join(dir, 'used'))}, [...new Set(used)].join(',')));
`,
    );
    const r = await execa(process.execPath, ['-r', hook, '--', RBP, 'detect', app], { env: { NO_COLOR: '1' }, stripFinalNewline: false });
    expect(r.stdout).toBe(expected);
    expect(fs.readFileSync(path.join(dir, 'used'), 'utf8')).toBe('');
    // rbp build still writes through Node.js's streams: the same check sees them.
    await execa(process.execPath, ['-r', hook, '--', RBP, 'build', '--help'], { env: { NO_COLOR: '1' } });
    expect(fs.readFileSync(path.join(dir, 'used'), 'utf8')).toContain('stdout');
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

  /**
   * rbp detect with stdout and stderr on one SOCK_SEQPACKET socket, which keeps every write a message
   * of its own: the messages read, in order.
   */
  async function detectMessages(appDir: string) {
    const script = `
import json, os, socket, subprocess, sys
ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
p = subprocess.Popen(sys.argv[1:], stdout=theirs, stderr=theirs, env=dict(os.environ, NO_COLOR="1"))
theirs.close()
messages = []
while True:
    m = ours.recv(1 << 20)
    if not m:
        break
    messages.append(m.decode())
print(json.dumps({"code": p.wait(), "messages": messages}))
`;
    const r = await execa('python3', ['-c', script, process.execPath, '--', RBP, 'detect', appDir], { reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as { code: number; messages: string[] };
  }

  it('goes out in one write', async () => {
    const r = await detectMessages(app);
    expect(r.code).toBe(0);
    expect(r.messages).toEqual([expected]);
  });

  it("keeps stdout's and stderr's lines in the order written: a failed detect's log, then its error", async () => {
    const broken = tmpDir('rbp-output-broken-');
    fs.writeFileSync(path.join(broken, 'package.json'), '{ "name": ');
    const r = await detectMessages(broken);
    expect(r.code).toBe(21);
    // The heading goes out before the detects run, their results when they are judged, the error last.
    expect(r.messages.join('')).toMatch(
      /^## Detect\n- err: {2}rbp\/node@[\s\S]*- fail: rbp\/phpserver@[^\n]*\nERROR: detection failed with a buildpack error\n$/,
    );
    expect(r.messages.at(-1)).toBe('ERROR: detection failed with a buildpack error\n');
  });
});
