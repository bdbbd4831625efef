/**
 * A static site's launch with no Node.js anywhere, as in its image: the launch process follows the
 * plan its build stored (lib/launch/stored-plan.ts) while the variables the plan read are as at build;
 * the port is the launch's. The launch is started as an image's launcher starts it: rbp-launch from
 * the launch PATH, in the app's folder, with the environment `rbp run --dry-run` shows minus rbp's
 * Node.js. The OUT is moved first: nothing in it names the folder it was built in. Served by the real
 * Caddy (RBP_TOOL_CADDY).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { copyFixture, envArgs, freePort, rbp, tmpDir, waitForHttp } from '../helpers/rbp.ts';
import { realTool } from '../helpers/tool-cache.ts';

const caddy = realTool('RBP_TOOL_CADDY', 'stored-plan.test.ts');

interface Launched {
  pid: number;
  status: Promise<number | null>;
  output: () => string;
}

describe.skipIf(caddy.skip)('a launch with no Node.js follows the plan stored at build', () => {
  let out = '';
  let base: Record<string, string> = {};
  beforeAll(async () => {
    const built = path.join(tmpDir('rbp-stored-'), 'out');
    const r = await rbp(['build', copyFixture('launcher-static'), '--out', built, '--type', 'static', ...envArgs({ CC_STATIC_SERVER: 'caddy' })], {
      env: { RBP_TOOL_CADDY: caddy.path() },
    });
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('launch: no Node.js in the image: the launch follows the plan stored at build');
    // Moved: the launch finds its layer, the app and the server from where they are now.
    out = path.join(tmpDir('rbp-stored-moved-'), 'out');
    fs.renameSync(built, out);
    const d = await rbp(['run', out, '--dry-run', '--port', '1']);
    expect(d.exitCode, d.all).toBe(0);
    const { RBP_LAUNCHER_NODE: _node, PORT: _port, RBP_PUBLIC_PORT: _public, ...env } = (JSON.parse(d.stdout) as { env: Record<string, string> }).env;
    base = env;
  }, 300_000);

  function launch(env: Record<string, string>): Launched {
    const child = spawn('rbp-launch', [], { cwd: path.join(out, 'workspace'), env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (text += d.toString()));
    return { pid: child.pid!, status: new Promise((r) => child.on('close', (code) => r(code))), output: () => text };
  }

  async function serves(l: Launched, port: number): Promise<string> {
    let ended = false;
    void l.status.then(() => (ended = true));
    await waitForHttp(port, () => !ended, 30_000).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}\n${l.output()}`);
    });
    return (await fetch(`http://127.0.0.1:${port}/`)).text();
  }

  it('starts caddy itself on the launch’s port: the launch process becomes the server', async () => {
    const port = await freePort();
    const l = launch({ RBP_PUBLIC_PORT: String(port) });
    expect(await serves(l, port)).toContain('started by a launcher on its own Node.js');
    expect(fs.readlinkSync(`/proc/${l.pid}/exe`)).toBe(fs.realpathSync(caddy.path()));
    expect(l.output()).toContain('- exec caddy (nothing to supervise)');
    process.kill(l.pid, 'SIGTERM');
    expect(await l.status).toBe(0);
  });

  it('takes the runtime’s port variable before the public port', async () => {
    const port = await freePort();
    const l = launch({ RBP_PUBLIC_PORT: '1', CC_STATIC_PORT: String(port) });
    expect(await serves(l, port)).toContain('started by a launcher');
    process.kill(l.pid, 'SIGTERM');
    expect(await l.status).toBe(0);
  });

  it.each([
    [{ CC_RUN_COMMAND: 'caddy file-server' }, 'CC_RUN_COMMAND differs from its value at build, which the stored plan was made with'],
    [{ RBP_RESTART: 'on-failure' }, 'RBP_RESTART differs from its value at build, which the stored plan was made with'],
    [{ CC_REQUEST_FLOW: 'block' }, 'CC_REQUEST_FLOW differs from its value at build, which the stored plan was made with'],
    [{ RBP_PUBLIC_PORT: '80a' }, 'RBP_PUBLIC_PORT=80a, which is not a plain port number'],
    [{ CC_STATIC_PORT: '70000' }, 'CC_STATIC_PORT=70000, which is not a port from 1 to 65535'],
  ])('%j: one clear error saying what to set, and nothing starts', async (env, what) => {
    const l = launch(env);
    expect(await l.status).toBe(1);
    expect(l.output()).toContain(`! Seen: what changed since the build: "${what}" (the launch environment)`);
    expect(l.output()).toContain('(error id: launch/stored-plan/changed)');
    expect(l.output()).not.toContain('- exec');
  });

  it('the error, in full', async () => {
    const l = launch({ CC_RUN_COMMAND: 'caddy file-server' });
    await l.status;
    expect(l.output()).toMatchSnapshot();
  });

  it('given a Node.js (RBP_LAUNCHER_NODE), the launch plans anew with the launch’s variables', async () => {
    const port = await freePort();
    const l = launch({ RBP_PUBLIC_PORT: String(port), RBP_LAUNCHER_NODE: process.execPath, CC_RUN_COMMAND: `${caddy.path()} file-server --listen :${port}` });
    expect(await serves(l, port)).toContain('started by a launcher');
    expect(fs.readlinkSync(`/proc/${l.pid}/exe`)).toBe(fs.realpathSync(caddy.path()));
    process.kill(l.pid, 'SIGTERM');
    expect(await l.status).toBe(0);
  });
});
