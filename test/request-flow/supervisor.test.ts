// The supervisor with real processes: small node servers, started inside-out.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Logger } from '../../lib/log.ts';
import { listening } from '../../lib/launch/request-flow/allocate.ts';
import { exitStatus, spawnMember, supervise, type Member } from '../../lib/launch/supervisor.ts';
import { freePort } from '../helpers/rbp.ts';

function logger(): { log: Logger; text: () => string } {
  let text = '';
  const out = new Writable({
    write: (c: Buffer, _e, cb) => {
      text += c.toString();
      cb();
    },
  });
  return { log: new Logger({ out, color: false }), text: () => text };
}

/** A node server on `port` after `delayMs`; with `needs`, it exits 5 at start unless that port already listens. */
function server(name: string, port: number, o: { delayMs?: number; needs?: number; exitAfterMs?: number; pidFile?: boolean } = {}): Member {
  const code = `
    const net = require('node:net');
    const start = () => { const s = net.createServer((c) => c.end()); s.listen(${port}); process.on('SIGTERM', () => process.exit(0)); };
    const go = () => setTimeout(start, ${o.delayMs ?? 0});
    ${o.exitAfterMs ? `setTimeout(() => process.exit(3), ${o.exitAfterMs});` : ''}
    ${o.needs ? `const c = net.connect(${o.needs}, '127.0.0.1'); c.on('connect', () => { c.destroy(); go(); }); c.on('error', () => process.exit(5));` : 'go();'}
  `;
  const member: Member & { pid?: number } = {
    name,
    shown: `${name} server`,
    listen: port,
    status: name === 'app' ? exitStatus : () => 94,
    notListeningStatus: name === 'app' ? 96 : 94,
    start() {
      const h = spawnMember(['node', '-e', code], { env: { ...process.env } as Record<string, string> });
      member.pid = h.pid;
      return h;
    },
  };
  return member;
}

const alive = (pid?: number) => {
  try {
    process.kill(pid!, 0);
    return true;
  } catch {
    return false;
  }
};

const opts = (log: Logger) => ({ log, listenTimeoutMs: 10_000, stopTimeoutMs: 3000, primary: 'app', ready: 'ready' });

describe('supervise', () => {
  it('starts inside-out, each after the previous listens; a middleware crash stops the rest with its status', async () => {
    const [appPort, mwPort] = [await freePort(), await freePort()];
    const app = server('app', appPort, { delayMs: 400 }) as Member & { pid?: number };
    // Exits 5 if the app is not listening when it starts, 3 once it has run 1.5s.
    const mw = server('custom middleware', mwPort, { needs: appPort, exitAfterMs: 1500 });
    const { log, text } = logger();
    const status = await supervise([app, mw], opts(log));
    expect(text()).toContain('custom middleware (custom middleware server) exited with status 3; stopping the others');
    expect(text()).toContain('! launch exits with status 94: custom middleware failed');
    expect(text()).toMatch(/starting app on port \d+: app server\n {2}- listening on \d+ \(\d+(?:ms|\.\ds)\)\n- starting custom middleware/);
    expect(text()).toContain('- ready (');
    expect(status).toBe(94);
    expect(alive(app.pid)).toBe(false);
    expect(await listening(appPort)).toBe(false);
  });

  it('the app exiting ends the run with its own status', async () => {
    const app = server('app', await freePort(), { exitAfterMs: 800 });
    const mw = server('cache proxy', await freePort());
    const { log } = logger();
    expect(await supervise([app, mw], opts(log))).toBe(3);
  });

  it('SIGTERM is forwarded to all; the run ends with the app’s status', async () => {
    const app = server('app', await freePort()) as Member & { pid?: number };
    const mw = server('cache proxy', await freePort()) as Member & { pid?: number };
    const { log, text } = logger();
    const run = supervise([app, mw], opts(log));
    while (!text().includes('ready')) await new Promise((r) => setTimeout(r, 50));
    process.emit('SIGTERM');
    expect(await run).toBe(0);
    expect(text()).toContain('SIGTERM: stopping app, cache proxy');
    expect(alive(app.pid) || alive(mw.pid)).toBe(false);
  });

  it('a member that never listens fails the run with its status', async () => {
    const app = server('app', await freePort(), { delayMs: 60_000 });
    const { log, text } = logger();
    expect(await supervise([app], { ...opts(log), listenTimeoutMs: 500 })).toBe(96);
    expect(text()).toMatch(/! app did not listen on port \d+ within 500ms/);
  });

  it('a command that cannot start', async () => {
    const app: Member = {
      name: 'app',
      shown: 'nope',
      listen: await freePort(),
      status: (e) => (e.error ? 127 : exitStatus(e)),
      start: () => spawnMember(['/nonexistent/bin'], { env: {} }),
    };
    const { log, text } = logger();
    expect(await supervise([app], opts(log))).toBe(127);
    expect(text()).toContain('app (nope) could not start (spawn /nonexistent/bin ENOENT)');
  });

  it('the app on the public port instead of its own is named as such', async () => {
    const pub = await freePort();
    const app: Member = { ...server('app', pub), listen: await freePort(), misplaced: { port: pub, message: 'listens on the public port' } };
    const { log, text } = logger();
    expect(await supervise([app], opts(log))).toBe(96);
    expect(text()).toContain('! app listens on the public port');
  });
});
