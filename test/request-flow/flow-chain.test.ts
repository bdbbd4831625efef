// The chain without Varnish, built and run with rbp: a custom middleware written for these tests
// (fixtures/flow-app/middleware.mjs, a real HTTP proxy), operator programs, block, ports, crashes
// and secrets.
import { beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import path from 'node:path';
import { FIXTURES, freePort, rbp, tmpDir } from '../helpers/rbp.ts';
import { buildFlowApp, dryRun, envArgs, flowBuildpack, get, startRun, waitHttp, waitOutput } from './helpers.ts';

const MW = (name: string, extra = '') => `node middleware.mjs ${name} @@LISTEN_PORT@@ @@FORWARD_PORT@@${extra}`;
const SECRETS = { ACCESSPROXY_CHALLENGE_SECRET: 'challenge-VALUE-4711', CC_REDIRECTOR_PROJECT_KEY: 'project-VALUE-0815' };
/** The operator's programs: here the same real proxy, under their names. */
const OPERATOR = { RBP_ACCESSPROXY_COMMAND: MW('accessproxy'), RBP_REDIRECTOR_COMMAND: MW('redirector') };

let out = '';
beforeAll(async () => {
  const b = await buildFlowApp('flow-app');
  expect(b.result.exitCode, b.result.all).toBe(0);
  out = b.out;
});

/** Whether something listens on the port (a TCP connect to loopback succeeds). */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: '127.0.0.1' });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(1000, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

async function ports() {
  return { port: await freePort(), appPort: await freePort() };
}

describe('custom middleware', () => {
  it('runs CC_REQUEST_FLOW_CUSTOM with its ports; it adds its header to every response', async () => {
    const { port, appPort } = await ports();
    const run = startRun(out, port, { CC_REQUEST_FLOW: 'custom', CC_REQUEST_FLOW_CUSTOM: MW('custom') }, { RBP_APP_PORT: String(appPort) });
    try {
      const r = await waitHttp(port, run);
      expect(r.status).toBe(200);
      expect(r.headers.get('x-custom-count')).toBe('1');
      expect(r.headers.get('x-seen-flow-path')).toBe('custom');
      expect((await get(port)).headers.get('x-custom-count')).toBe('2');
      // The app listens on its own port, where the middleware forwards.
      const env = await (await get(port, '/env')).json();
      expect(env).toMatchObject({ listen: appPort, env: { PORT: String(appPort) } });
      const log = await waitOutput(run, 'request flow ready');
      expect(log).toMatch(new RegExp(`- starting custom middleware on port ${port}: node middleware.mjs custom ${port} ${appPort}`));
    } finally {
      expect(await run.stop()).toBe(0);
    }
  });
});

describe('two middlewares, both orders', () => {
  it.each([
    ['redirector,custom', 'accessproxy,redirector,custom'],
    ['custom,redirector', 'accessproxy,custom,redirector'],
  ])('CC_REQUEST_FLOW=%s: requests pass %s, the access proxy first', async (flow, pathSeen) => {
    const { port, appPort } = await ports();
    const run = startRun(
      out,
      port,
      { CC_REQUEST_FLOW: flow, CC_REQUEST_FLOW_CUSTOM: MW('custom'), ...SECRETS },
      { RBP_APP_PORT: String(appPort), ...OPERATOR },
    );
    try {
      const r = await waitHttp(port, run);
      expect(r.headers.get('x-seen-flow-path')).toBe(pathSeen);
      // Responses come back the other way.
      expect(r.headers.get('x-flow-via')).toBe(pathSeen.split(',').reverse().join(','));
    } finally {
      await run.stop();
    }
  });
});

describe('secrets', () => {
  it('reach only the middleware that needs them: not the app, not the others, not the logs', async () => {
    const { port, appPort } = await ports();
    const env = { CC_REQUEST_FLOW: 'custom', CC_REQUEST_FLOW_CUSTOM: MW('custom'), ...SECRETS };
    const run = startRun(out, port, env, { RBP_APP_PORT: String(appPort), ...OPERATOR });
    let output: string;
    try {
      const r = await waitHttp(port, run);
      expect(r.headers.get('x-accessproxy-secrets')).toBe('ACCESSPROXY_CHALLENGE_SECRET');
      expect(r.headers.get('x-redirector-secrets')).toBe('CC_REDIRECTOR_PROJECT_KEY');
      expect(r.headers.get('x-custom-secrets')).toBe('none');
      expect((await (await get(port, '/env')).json()).secrets).toEqual([]);
      await waitOutput(run, 'request flow ready');
    } finally {
      await run.stop();
      output = run.output();
    }
    expect(output).toContain('starting access proxy');
    for (const v of Object.values(SECRETS)) expect(output).not.toContain(v);
    const d = await dryRun(out, port, env, { RBP_APP_PORT: String(appPort), ...OPERATOR });
    expect(d.result.exitCode).toBe(0);
    for (const v of Object.values(SECRETS)) expect(d.result.all).not.toContain(v);
    expect(d.launch!.processes.map((p: { name: string; secrets?: string[] }) => [p.name, p.secrets])).toEqual([
      ['accessproxy', ['ACCESSPROXY_CHALLENGE_SECRET']],
      // Named first (custom), then the active, unnamed redirector.
      ['custom', []],
      ['redirector', ['CC_REDIRECTOR_PROJECT_KEY']],
      ['app', undefined],
    ]);
  });
});

describe('block', () => {
  it('the public port answers 403 to everything while the app keeps running', async () => {
    const { port, appPort } = await ports();
    const run = startRun(out, port, { CC_REQUEST_FLOW: 'block' }, { RBP_APP_PORT: String(appPort) });
    try {
      const r = await waitHttp(port, run);
      expect(r.status).toBe(403);
      expect((await get(port, '/env')).status).toBe(403);
      const direct = await get(appPort);
      expect(direct.status).toBe(200);
      expect(await direct.text()).toMatch(/^hello from flow-app/);
      await waitOutput(run, `request flow ready: :${port} → 403 (blocked) → app :${appPort}`);
    } finally {
      expect(await run.stop()).toBe(0);
    }
  });
});

describe('block and the deployment health check', () => {
  it('rbp deploy checks the application on its own port, since the public port answers 403', async () => {
    const { port, appPort } = await ports();
    const r = await rbp(
      [
        'deploy',
        path.join(FIXTURES, 'flow-app'),
        '--out',
        path.join(tmpDir('rbp-flow-deploy-'), 'out'),
        '--buildpack',
        await flowBuildpack(),
        '--port',
        String(port),
        '--check',
        ...envArgs({ FLOW_RUNTIME: 'node', CC_REQUEST_FLOW: 'block' }),
      ],
      { env: { RBP_APP_PORT: String(appPort) } },
    );
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain(`CC_REQUEST_FLOW=block: public access is blocked, so the health check goes to the application's port ${appPort}`);
    expect(r.all).toContain('Response from GET / is 200');
  });
});

describe('failures', () => {
  it('a crashing middleware stops the app; the status says which one failed', async () => {
    const { port, appPort } = await ports();
    const run = startRun(
      out,
      port,
      { CC_REQUEST_FLOW: 'custom', CC_REQUEST_FLOW_CUSTOM: MW('custom', ' --crash-after 1500') },
      { RBP_APP_PORT: String(appPort) },
    );
    expect((await waitHttp(port, run)).status).toBe(200);
    expect(await run.exited).toBe(94);
    expect(run.output()).toContain('! node (custom middleware) exited with status 3; stopping app; the launch exits with status 94');
    expect(await listening(appPort)).toBe(false);
  });
  it('a middleware that fails at start: nothing is left listening', async () => {
    const { port, appPort } = await ports();
    const run = startRun(
      out,
      port,
      { CC_REQUEST_FLOW: 'custom', CC_REQUEST_FLOW_CUSTOM: 'exit 7 # @@LISTEN_PORT@@ @@FORWARD_PORT@@' },
      { RBP_APP_PORT: String(appPort) },
    );
    expect(await run.exited).toBe(94);
    expect(run.output()).toContain('exited with status 7');
    expect(await listening(appPort)).toBe(false);
  });
  it('an operator program that is not installed', async () => {
    const { port, appPort } = await ports();
    const run = startRun(out, port, { CC_REDIRECTOR_PROJECT_KEY: 'k' }, { RBP_APP_PORT: String(appPort) });
    expect(await run.exited).toBe(92);
    expect(run.output()).toContain('! redirectionio-agent (redirection proxy) exited with status 127');
  });
  it('an invalid CC_REQUEST_FLOW stops the launch with one clear error', async () => {
    const { port } = await ports();
    const run = startRun(out, port, { CC_REQUEST_FLOW: 'redirector' });
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('! ERROR CC_REQUEST_FLOW names redirector, which is not active');
    expect(run.output()).not.toMatch(/\n\s+at /);
  });
});

describe('at build', () => {
  it('an invalid CC_REQUEST_FLOW fails the build, before anything runs', async () => {
    const b = await buildFlowApp('flow-app', { env: { CC_REQUEST_FLOW: 'cache' } });
    expect(b.result.exitCode).not.toBe(0);
    expect(b.result.all).toContain('! ERROR CC_REQUEST_FLOW names cache, which is not active');
    expect(b.result.all).toContain('(error id: request-flow/not-active)');
  });
  it('the chain is logged, secrets are not', async () => {
    const b = await buildFlowApp('flow-app', { env: { CC_REQUEST_FLOW: 'custom', CC_REQUEST_FLOW_CUSTOM: MW('custom'), ...SECRETS } });
    expect(b.result.exitCode, b.result.all).toBe(0);
    expect(b.result.all).toContain('- Request flow: public port → accessproxy → custom → redirector → app');
    for (const v of Object.values(SECRETS)) expect(b.result.all).not.toContain(v);
  });
});

describe('ports for each runtime', () => {
  const outs: Record<string, string> = {};
  beforeAll(async () => {
    for (const runtime of ['static', 'phpserver']) {
      const b = await buildFlowApp('flow-app', { runtime });
      expect(b.result.exitCode, b.result.all).toBe(0);
      outs[runtime] = b.out;
    }
    outs.node = out;
  });
  const VAR: Record<string, string | undefined> = { node: undefined, static: 'CC_STATIC_PORT', phpserver: 'CC_PHPSERVER_PORT' };

  it.each(['node', 'static', 'phpserver'])('%s without middleware: the public port, or its port variable', async (runtime) => {
    const d = await dryRun(outs[runtime]!, 18123);
    expect(d.launch!.argv).toEqual(['node', 'server.js', '18123']);
    expect(d.launch!.requestFlow).toMatchObject({ chain: [], block: false, appPort: 18123 });
    expect(d.launch!.processes).toEqual([expect.objectContaining({ name: 'app', listen: 18123 })]);
    const v = VAR[runtime];
    if (v) {
      const own = await dryRun(outs[runtime]!, 18123, { [v]: '8181' });
      expect(own.launch!.argv).toEqual(['node', 'server.js', '8181']);
      expect(own.launch!.processes.at(-1)!.listen).toBe(8181);
    }
  });

  it.each(['node', 'static', 'phpserver'])('%s with a middleware: 9000, and PORT and its port variable say so', async (runtime) => {
    const v = VAR[runtime];
    const env = { CC_REQUEST_FLOW: 'custom', CC_REQUEST_FLOW_CUSTOM: MW('custom'), ...(v ? { [v]: '8181' } : {}) };
    const d = await dryRun(outs[runtime]!, 18123, env);
    expect(d.launch!.argv).toEqual(['node', 'server.js', '9000']);
    expect(d.launch!.env.PORT).toBe('9000');
    if (v) expect(d.launch!.env[v]).toBe('9000');
    expect(d.launch!.processes.map((p: { name: string; listen: number; forward?: number }) => [p.name, p.listen, p.forward])).toEqual([
      ['custom', 18123, 9000],
      ['app', 9000, undefined],
    ]);
    // For real, on a free app port (RBP_APP_PORT), through the chain.
    const { port, appPort } = await ports();
    const run = startRun(outs[runtime]!, port, env, { RBP_APP_PORT: String(appPort) });
    try {
      const seen = await (await waitHttp(port, run, '/env')).json();
      expect(seen.listen).toBe(appPort);
      expect(seen.env.PORT).toBe(String(appPort));
      if (v) expect(seen.env[v]).toBe(String(appPort));
    } finally {
      await run.stop();
    }
  });

  it('node without middleware, for real: the app answers on the public port itself', async () => {
    const { port } = await ports();
    const run = startRun(out, port);
    try {
      const seen = await (await waitHttp(port, run, '/env')).json();
      expect(seen).toMatchObject({ listen: port, env: { PORT: String(port) } });
      expect((await get(port)).headers.get('x-flow-via')).toBeNull();
    } finally {
      expect(await run.stop()).toBe(0);
    }
  });
});
