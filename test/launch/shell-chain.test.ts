/**
 * The chain's shell form (lib/launch/shell-chain.ts) run by dash on its own, from a plan written
 * here: the flow fixture's real app (fixtures/flow-app/server.js) and its real HTTP proxy as the
 * custom middleware. The end-to-end cases (a real build, through rbp run) are in
 * test/request-flow/shell-chain.test.ts; these check what those cannot reach quickly: each secret
 * and the app's variables going only where they belong, the hooks, the stop timeout, a member that
 * never listens, an app on the public port and the form's account of itself (RBP_DRY_RUN=shell).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chainForm } from '../../lib/launch/shell-chain.ts';
import type { LaunchPlan } from '../../lib/launch/plan.ts';
import { listening } from '../../lib/launch/request-flow/allocate.ts';
import { SHELL_NAME } from '../../lib/launch/shell.ts';
import { FIXTURES, freePort, tmpDir } from '../helpers/rbp.ts';

const WHY = 'request flow: custom in front of the app';

/** The flow fixture in a folder of its own (CommonJS: the repository's package.json says module). */
function appDir(): string {
  const dir = path.join(tmpDir('rbp-shell-chain-'), 'app');
  fs.cpSync(path.join(FIXTURES, 'flow-app'), dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), '{ "type": "commonjs" }\n');
  return dir;
}

function plan(
  dir: string,
  ports: { pub: number; app: number },
  o: { custom?: string; kind?: 'custom' | 'accessproxy'; argv?: string[]; hooks?: LaunchPlan['hooks']; stopMs?: number; listenMs?: number } = {},
): LaunchPlan {
  const kind = o.kind ?? 'custom';
  const cmd = (o.custom ?? `node middleware.mjs ${kind} @@LISTEN_PORT@@ @@FORWARD_PORT@@`)
    .replaceAll('@@LISTEN_PORT@@', String(ports.pub))
    .replaceAll('@@FORWARD_PORT@@', String(ports.app));
  const env = { PORT: String(ports.app), GREETING: 'it\'s "quoted" $HOME' };
  return {
    argv: o.argv ?? ['node', 'server.js'],
    cwd: dir,
    env,
    envSources: { PORT: 'port', GREETING: 'runtime' },
    port: ports.app,
    portSource: 'RBP_APP_PORT',
    publicPort: ports.pub,
    requestFlow: {
      publicPort: ports.pub,
      appPort: ports.app,
      block: false,
      chain: [kind],
      skipped: [],
      middlewares: [{ kind, argv: ['/bin/sh', '-c', cmd], cwd: dir, env: {}, listen: ports.pub, forward: ports.app, shown: cmd, secrets: [] }],
    },
    restart: { policy: 'no', firstDelayMs: 1000, maxDelayMs: 30_000, healthyRunMs: 60_000 },
    timeouts: { listenMs: o.listenMs ?? 60_000, stopMs: o.stopMs ?? 10_000 },
    healthCheck: { port: ports.pub, paths: ['/'] },
    hooks: o.hooks ?? {},
    facts: {},
  };
}

interface Run {
  child: ChildProcess;
  output: () => string;
  until: (text: string) => Promise<void>;
  exited: Promise<number | null>;
}

const SECRETS = { ACCESSPROXY_CHALLENGE_SECRET: 'challenge-VALUE', CC_REDIRECTOR_PROJECT_KEY: 'key-VALUE' };

function run(p: LaunchPlan, env: Record<string, string> = {}): Run {
  const launchEnv = { PATH: process.env.PATH!, ...SECRETS, ...env };
  const child = spawn('dash', ['-c', chainForm(p, launchEnv, WHY), SHELL_NAME], { cwd: p.cwd, env: launchEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  return {
    child,
    output: () => out,
    exited,
    async until(text) {
      const deadline = Date.now() + 30_000;
      while (!out.includes(text)) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`never printed ${text}:\n${out}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
  };
}

const ports = async () => ({ pub: await freePort(), app: await freePort() });

describe('the chain shell form', () => {
  it('gives the app its variables and no secret, the middleware none of the others’ secrets; hooks run in the app’s environment', async () => {
    const dir = appDir();
    const p = plan(dir, await ports(), {
      hooks: {
        prestart: 'echo "prestart PORT=$PORT ${ACCESSPROXY_CHALLENGE_SECRET:-no-secret}"',
        poststart: 'echo "poststart $npm_lifecycle_event $GREETING"',
      },
    });
    const r = run(p);
    try {
      await r.until('- request flow ready');
      const res = await fetch(`http://127.0.0.1:${p.publicPort}/env`);
      expect(res.headers.get('x-custom-secrets')).toBe('none');
      const seen = (await res.json()) as { listen: number; env: Record<string, string>; secrets: string[] };
      expect(seen.listen).toBe(p.port);
      expect(seen.env.PORT).toBe(String(p.port));
      expect(seen.secrets).toEqual([]);
    } finally {
      r.child.kill('SIGINT');
    }
    expect(await r.exited).toBe(0);
    const out = r.output();
    expect(out).toContain(`prestart PORT=${p.port} no-secret\n`);
    expect(out).toContain(`- the launcher stays to supervise: ${WHY} (as /bin/sh: no Node.js beside the app)`);
    expect(out).toContain('- SIGINT: stopping app, custom middleware');
    expect(out).toContain('poststart poststart it\'s "quoted" $HOME\n');
    for (const v of Object.values(SECRETS)) expect(out).not.toContain(v);
  });

  it('the access proxy gets its own secret, and no other', async () => {
    const p = plan(appDir(), await ports(), { kind: 'accessproxy' });
    const r = run(p);
    try {
      await r.until('- request flow ready');
      const res = await fetch(`http://127.0.0.1:${p.publicPort}/env`);
      expect(res.headers.get('x-accessproxy-secrets')).toBe('ACCESSPROXY_CHALLENGE_SECRET');
      expect(((await res.json()) as { secrets: string[] }).secrets).toEqual([]);
      expect(r.output()).toContain(`- starting access proxy on port ${p.publicPort}: node middleware.mjs accessproxy ${p.publicPort} ${p.port}`);
    } finally {
      r.child.kill('SIGTERM');
    }
    expect(await r.exited).toBe(0);
  });

  it('SIGUSR2 goes to the app as it is: the app, which does not handle it, ends, and so does the chain', async () => {
    const p = plan(appDir(), await ports());
    const r = run(p);
    await r.until('- request flow ready');
    r.child.kill('SIGUSR2');
    expect(await r.exited).toBe(128 + 12);
    expect(r.output()).toContain('! app (node server.js) was killed by SIGUSR2; stopping the others\n! launch exits with status 140: app failed');
    expect(await listening(p.publicPort)).toBe(false);
  });

  it('a member that outlives SIGTERM gets SIGKILL after the stop timeout, named', async () => {
    const dir = appDir();
    // The sh ignores SIGTERM, and so does the sleep it becomes; the proxy it started handles it itself.
    const p = plan(dir, await ports(), { custom: 'trap "" TERM; node middleware.mjs custom @@LISTEN_PORT@@ @@FORWARD_PORT@@ & exec sleep 60', stopMs: 1000 });
    const r = run(p);
    await r.until('- request flow ready');
    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(0);
    expect(r.output()).toContain('! custom middleware still running after 1.0s: SIGKILL');
    expect(await listening(p.publicPort)).toBe(false);
  });

  it('an app that never listens: 96 after the listen timeout; the middleware never starts', async () => {
    const p = plan(appDir(), await ports(), { argv: ['sleep', '60'], listenMs: 500 });
    const r = run(p);
    expect(await r.exited).toBe(96);
    expect(r.output()).toContain(`! app did not listen on port ${p.port} within 500ms\n! launch exits with status 96: app did not listen\n`);
    expect(r.output()).not.toContain('starting custom middleware');
  });

  it('an app on the public port instead of its own: 96, said as such', async () => {
    const pp = await ports();
    const p = plan(appDir(), pp, { argv: ['node', 'server.js', String(pp.pub)] });
    const r = run(p);
    expect(await r.exited).toBe(96);
    expect(r.output()).toContain(`! app listens on the public port ${pp.pub}: behind request-flow middleware it must listen on ${pp.app} (its PORT variable)`);
    expect(await listening(pp.pub)).toBe(false);
  });

  it('RBP_DRY_RUN=shell: the form says what it would run, as the plan says', async () => {
    const p = plan(appDir(), await ports());
    const r = run(p, { RBP_DRY_RUN: 'shell' });
    expect(await r.exited).toBe(0);
    expect(JSON.parse(r.output())).toEqual({
      form: 'shell',
      members: [
        { name: 'app', listen: p.port, argv: p.argv },
        { name: 'custom middleware', listen: p.publicPort, argv: p.requestFlow!.middlewares[0]!.argv },
      ],
      mode: 'supervise',
      modeWhy: WHY,
      route: `:${p.publicPort} → custom → app :${p.port}`,
      port: p.publicPort,
    });
  });
});
