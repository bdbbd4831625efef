/**
 * The launch steps aside (DESIGN, the launch entrypoint, step 3): with nothing to supervise, the
 * launch process becomes the app, and nothing of ours stays beside it. Real builds, real processes:
 * rbp's child is looked at in /proc, and signals and exit statuses go through rbp as on a platform.
 * - node-hello: exec mode, rbp's child IS `node server.js`;
 * - prestart only: it runs, then the launch becomes the app;
 * - node-prepoststart: poststart runs after the app exits, so the launch stays (supervise, in sh);
 * - a static site: the launch becomes caddy.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { copyFixture, envArgs, FIXTURES, freePort, MACHINE_PATH, RBP, rbp, tmpDir } from '../helpers/rbp.ts';
import { settledFlag } from '../helpers/settled.ts';
import { caddyTool } from '../static/helpers.ts';

const trust: Record<string, string> = process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {};
const caddy = await caddyTool();
if (!caddy) console.warn('execve tests: no caddy on this machine (apt-get install caddy, or RBP_TOOL_CADDY): the static launcher case is skipped');

async function buildNode(app: string): Promise<string> {
  const out = path.join(tmpDir('rbp-execve-'), 'out');
  const r = await rbp(['build', app, '--out', out, '--type', 'node', ...envArgs(trust)]);
  expect(r.exitCode, r.all).toBe(0);
  return out;
}

interface LaunchPlanJson {
  argv: string[];
  env: Record<string, string>;
  mode: 'exec' | 'supervise';
  modeWhy: string;
}

async function dryRun(out: string, port: number): Promise<{ env: Record<string, string>; argv: string[]; launch: LaunchPlanJson }> {
  const r = await rbp(['run', out, '--dry-run', '--port', String(port)]);
  expect(r.exitCode, r.all).toBe(0);
  return JSON.parse(r.stdout) as { env: Record<string, string>; argv: string[]; launch: LaunchPlanJson };
}

interface Run {
  rbp: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** `rbp run OUT --port P` in the background, answering HTTP. */
async function startRun(out: string, port: number, extraEnv: Record<string, string> = {}, args: string[] = []): Promise<Run> {
  const child = spawn('node', [RBP, 'run', out, '--port', String(port), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PATH: MACHINE_PATH, NO_COLOR: '1', ...extraEnv },
  });
  let output = '';
  child.stdout.on('data', (d: Buffer | string) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer | string) => (output += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const ended = settledFlag(exited);
  const t0 = Date.now();
  for (;;) {
    if (ended()) throw new Error(`rbp run exited before the app listened:\n${output}`);
    if (Date.now() - t0 > 30_000) throw new Error(`nothing answered on ${port}:\n${output}`);
    try {
      await fetch(`http://127.0.0.1:${port}/`);
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { rbp: child, output: () => output, exited };
}

function childrenOf(pid: number): number[] {
  const r = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
  return r.stdout
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(Number);
}

function cmdline(pid: number): string[] {
  return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
}

function environ(pid: number): Record<string, string> {
  const entries = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return Object.fromEntries(entries.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
}

/** The only child of rbp: the launch process, or what it became. */
function rbpChild(run: Run): number {
  const kids = childrenOf(run.rbp.pid!);
  expect(kids).toHaveLength(1);
  return kids[0]!;
}

/** The node runtime's Node.js 24 from the first build: a Node.js with process.execve, for rbp itself. */
let node24 = '';

describe('a node app with nothing to supervise (the runtime’s Node.js 24)', () => {
  let out = '';
  beforeAll(async () => {
    out = await buildNode(path.join(FIXTURES, 'node-hello'));
    node24 = path.join(out, 'layers/rbp_node/node/bin/node');
  }, 300_000);

  it('dry run: mode exec; the process is rbp-launch, found on the launch PATH', async () => {
    const d = await dryRun(out, await freePort());
    expect(d.argv).toEqual([path.join(out, 'layers/rbp_node/launcher/bin/rbp-launch')]);
    expect(d.launch.argv).toEqual(['/bin/sh', '-c', 'exec node server.js']);
    expect(d.launch.mode).toBe('exec');
    expect(d.launch.modeWhy).toBe('nothing to supervise: the launch replaces itself with the app');
  });

  it('rbp’s child is the app itself, with the environment the spawned app would get', async () => {
    const port = await freePort();
    const plan = await dryRun(out, port);
    const run = await startRun(out, port);
    try {
      const pid = rbpChild(run);
      expect(cmdline(pid)).toEqual(['node', 'server.js']);
      expect(childrenOf(pid)).toEqual([]);
      expect(fs.readlinkSync(`/proc/${pid}/cwd`)).toBe(path.join(out, 'workspace'));
      // rbp's launch environment with the plan's variables on top; PWD is the shell's own
      // (sh -c 'exec node server.js' exports it).
      const { PWD, ...seen } = environ(pid);
      expect(PWD).toBe(path.join(out, 'workspace'));
      expect(seen).toEqual({ ...plan.env, ...plan.launch.env });
      expect(run.output()).toContain('- exec node (nothing to supervise)\n');
      expect(run.output()).not.toContain('starting app');
      // The planner on Node.js 24 reads no deprecated built-in export (fs.F_OK warns there).
      expect(run.output()).not.toContain('DeprecationWarning');
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toMatch(/^hello from node v24\.\d+\.\d+ \(production\)/);
    } finally {
      run.rbp.kill('SIGTERM');
    }
    // SIGTERM to rbp reaches the app, which closes its server and exits 0: rbp's status.
    expect(await run.exited).toBe(0);
  });

  it('a run command given at run: planned at launch, the launch becomes it', async () => {
    const port = await freePort();
    const run = await startRun(out, port, {}, ['--env', 'CC_RUN_COMMAND=node server.js']);
    try {
      const pid = rbpChild(run);
      expect(cmdline(pid)).toEqual(['node', 'server.js']);
      expect(childrenOf(pid)).toEqual([]);
      expect(
        environ(pid)
          .PATH!.split(':')
          .filter((d) => d.endsWith('node_modules/.bin') && d.startsWith(out)),
      ).toHaveLength(1);
      expect(environ(pid).OLDPWD).toBeUndefined();
    } finally {
      run.rbp.kill('SIGTERM');
    }
    expect(await run.exited).toBe(0);
  });

  it('rbp exits with the app’s status: 128+9 when the app is killed', async () => {
    const run = await startRun(out, await freePort());
    const pid = rbpChild(run);
    expect(cmdline(pid)).toEqual(['node', 'server.js']);
    process.kill(pid, 'SIGKILL');
    expect(await run.exited).toBe(137);
  });
});

describe('prestart only: it runs first, then the launcher steps aside', () => {
  let out = '';
  beforeAll(async () => {
    const app = copyFixture('node-prepoststart');
    const pkgFile = path.join(app, 'package.json');
    const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8')) as { scripts: Record<string, string> };
    delete pkg.scripts.poststart;
    fs.writeFileSync(pkgFile, JSON.stringify(pkg));
    out = await buildNode(app);
  }, 300_000);

  it('serves with the prestart marker from the process the launcher became', async () => {
    const port = await freePort();
    expect((await dryRun(out, port)).launch.mode).toBe('exec');
    const run = await startRun(out, port);
    try {
      expect(cmdline(rbpChild(run))).toEqual(['node', 'server.js']);
      const info = (await (await fetch(`http://127.0.0.1:${port}/info`)).json()) as { marker: string };
      expect(info.marker).toBe('prestart-ran');
    } finally {
      run.rbp.kill('SIGTERM');
    }
    expect(await run.exited).toBe(0);
  });
});

describe('a node app with a poststart script stays supervised', () => {
  let out = '';
  beforeAll(async () => {
    out = await buildNode(copyFixture('node-prepoststart'));
  }, 300_000);

  it('dry run: mode supervise, because of poststart', async () => {
    const d = await dryRun(out, await freePort());
    expect(d.launch.mode).toBe('supervise');
    expect(d.launch.modeWhy).toBe('scripts.poststart runs after the app exits');
  });

  it('rbp’s child is the launch’s sh, not Node.js, and poststart runs after SIGTERM', async () => {
    const run = await startRun(out, await freePort());
    try {
      const launcher = rbpChild(run);
      expect(cmdline(launcher)).toEqual(['/bin/sh', path.join(out, 'layers/rbp_node/launcher/bin/rbp-launch')]);
      expect(childrenOf(launcher).map(cmdline)).toContainEqual(['node', 'server.js']);
      expect(run.output()).toContain('- the launch stays to supervise: scripts.poststart runs after the app exits');
    } finally {
      run.rbp.kill('SIGTERM');
    }
    expect(await run.exited).toBe(0);
    expect(fs.readFileSync(path.join(out, 'workspace', 'poststart.txt'), 'utf8').trim()).toBe('poststart-ran');
  });
});

describe.skipIf(!caddy)('a static site: the launch becomes caddy', () => {
  let out = '';
  const operator = (): Record<string, string> => ({ RBP_TOOL_CADDY: caddy!, RBP_LAUNCHER_NODE: process.execPath });
  beforeAll(async () => {
    out = path.join(tmpDir('rbp-execve-static-'), 'out');
    const r = await rbp(['build', copyFixture('launcher-static'), '--out', out, '--type', 'static', ...envArgs({ CC_STATIC_SERVER: 'caddy' })], {
      env: operator(),
    });
    expect(r.exitCode, r.all).toBe(0);
  }, 300_000);

  it('dry run: exec', async () => {
    const d = await dryRun(out, await freePort());
    expect(d.argv).toEqual([path.join(out, 'layers/rbp_static/launcher/bin/rbp-launch')]);
    expect(d.launch.argv[0]).toBe(caddy);
    expect(d.launch.mode).toBe('exec');
  });

  it('serves; rbp’s child is caddy itself, started as the dry run says, and SIGTERM stops it with status 0', async () => {
    const port = await freePort();
    const plan = await dryRun(out, port);
    const run = await startRun(out, port, operator());
    try {
      const pid = rbpChild(run);
      expect(cmdline(pid)).toEqual(plan.launch.argv);
      expect(fs.readlinkSync(`/proc/${pid}/cwd`)).toBe(path.join(out, 'workspace'));
      expect(environ(pid)).toMatchObject(plan.launch.env);
      expect(childrenOf(pid)).toEqual([]);
      expect(run.output()).toContain('- exec caddy (nothing to supervise)');
    } finally {
      run.rbp.kill('SIGTERM');
    }
    expect(await run.exited).toBe(0);
  });

  it('a busy public port is refused before caddy starts (Caddy binds with SO_REUSEPORT and would share it)', async () => {
    const server = net.createServer();
    const port = await new Promise<number>((resolve) => server.listen(0, '0.0.0.0', () => resolve((server.address() as net.AddressInfo).port)));
    try {
      const r = await rbp(['run', out, '--port', String(port)], { env: operator() });
      expect(r.exitCode, r.all).not.toBe(0);
      expect(r.all).toContain('(error id: launch/port/busy)');
      expect(r.all).not.toContain('- exec');
    } finally {
      server.close();
    }
  });

  it('rbp run on a Node.js with process.execve (the runtime’s 24) becomes the launch process, which becomes caddy: one pid, no Node.js left, no signal left ignored', async () => {
    // The node build above leaves its Node.js 24; run alone (-t), this test builds one itself.
    node24 ||= path.join(await buildNode(path.join(FIXTURES, 'node-hello')), 'layers/rbp_node/node/bin/node');
    const port = await freePort();
    const child = spawn(node24, [RBP, 'run', out, '--port', String(port)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PATH: MACHINE_PATH, ...operator(), NO_COLOR: '1' },
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      let status = 0;
      for (let i = 0; i < 100 && status !== 200; i++) {
        status = await fetch(`http://127.0.0.1:${port}/`).then(
          (r) => r.status,
          () => 0,
        );
        if (status !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe(200);
      expect(cmdline(child.pid!)[0]).toBe(caddy);
      expect(childrenOf(child.pid!)).toEqual([]);
      // Node.js ignores SIGPIPE and SIGXFSZ, and an ignored signal would stay ignored across execve
      // (caddy ignores SIGPIPE itself: SIGXFSZ tells).
      const ignored = parseInt(/^SigIgn:\t([0-9a-f]+)$/m.exec(fs.readFileSync(`/proc/${child.pid!}/status`, 'utf8'))![1]!, 16);
      expect(ignored & (1 << 24)).toBe(0);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 300_000);
});
