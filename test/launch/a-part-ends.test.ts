/**
 * A launch is one whole: when any of its processes ends (each middleware, the app), killed by a
 * signal or exiting on its own, the others are stopped, nothing the launch started is left (the app's
 * own children included), and the exit status and one log line say which part ended and how. With a
 * restart policy the whole launch starts again. Real processes under `rbp run`: the flow fixtures'
 * app and proxies (fixtures/flow-app), and Debian's Varnish for the cache proxy.
 */
import path from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeNeeding, varnishdRequirement } from '../helpers/requirement.ts';
import { envArgs, FIXTURES, freePort, RBP, tmpDir } from '../helpers/rbp.ts';
import { buildFlowApp, flowBuildpack, startRun, waitHttp, waitOutput, type Running } from '../request-flow/helpers.ts';
import { descendants, member, stillRunning } from './processes.ts';

const MW = (name: string) => `node middleware.mjs ${name} @@LISTEN_PORT@@ @@FORWARD_PORT@@`;
const CRASH = ' --crash-after 4000';
/** Every middleware at once: the access proxy and the redirector are the operator's programs, here the same real proxy. */
function chainEnv(crashing?: string): { env: Record<string, string>; operator: Record<string, string> } {
  const mw = (name: string) => MW(name) + (crashing === name ? CRASH : '');
  return {
    env: {
      CC_REQUEST_FLOW: 'custom',
      CC_REQUEST_FLOW_CUSTOM: mw('custom'),
      ACCESSPROXY_CHALLENGE_SECRET: 's1',
      CC_REDIRECTOR_PROJECT_KEY: 's2',
      FLOW_APP_CHILD: '1',
    },
    operator: { RBP_ACCESSPROXY_COMMAND: mw('accessproxy'), RBP_REDIRECTOR_COMMAND: mw('redirector') },
  };
}

const PARTS = {
  app: { match: /server\.js/, name: 'app', prog: 'node' },
  custom: { match: /middleware\.mjs custom/, name: 'custom middleware', prog: 'node', status: 94 },
  accessproxy: { match: /middleware\.mjs accessproxy/, name: 'access proxy', prog: 'node', status: 91 },
  redirector: { match: /middleware\.mjs redirector/, name: 'redirection proxy', prog: 'node', status: 92 },
} as const;

/** Starts the launch and waits until the whole chain serves; returns every process it started. */
async function started(out: string, env: Record<string, string>, operator: Record<string, string>, extra: Record<string, string> = {}) {
  const [port, appPort] = [await freePort(), await freePort()];
  const run = startRun(out, port, env, { RBP_APP_PORT: String(appPort), ...operator, ...extra });
  expect((await waitHttp(port, run)).status).toBe(200);
  await waitOutput(run, 'request flow ready');
  return { run, port, appPort, pids: descendants(run.proc.pid!).map((p) => p.pid) };
}

/** After the launch ended: nothing it started is left. */
async function expectNothingLeft(run: Running, pids: number[]): Promise<void> {
  expect(await stillRunning(pids), run.output()).toEqual([]);
}

describe('a part of a request-flow launch ends (rbp run)', () => {
  let out = '';
  beforeAll(async () => {
    const b = await buildFlowApp('flow-app');
    expect(b.result.exitCode, b.result.all).toBe(0);
    out = b.out;
  });

  for (const [part, p] of Object.entries(PARTS)) {
    for (const sig of ['SIGKILL', 'SIGTERM'] as const) {
      it(`${part} gets ${sig}: the others stop, one line says so, the status names it`, async () => {
        const { env, operator } = chainEnv();
        const { run, pids } = await started(out, env, operator);
        process.kill(await member(run.proc.pid!, p.match), sig);
        const status = await run.exited;
        // The flow app and the proxies end cleanly on SIGTERM (status 0): the app's clean end is the launch's.
        const how = sig === 'SIGKILL' ? 'was killed by SIGKILL' : 'exited with status 0';
        const expected = 'status' in p ? p.status : sig === 'SIGKILL' ? 137 : 0;
        expect(status, run.output()).toBe(expected);
        const lines = run
          .output()
          .split('\n')
          .filter((l) => l.includes(`${p.prog} (${p.name})`));
        expect(lines, run.output()).toEqual([expect.stringContaining(`${p.prog} (${p.name}) ${how}; stopping `)]);
        await expectNothingLeft(run, pids);
      });
    }
    it(`${part} exits on its own: the others stop, one line says so, the status names it`, async () => {
      const { env, operator } = chainEnv(part);
      const { run, port, pids } = await started(out, env, operator);
      if (part === 'app') await fetch(`http://127.0.0.1:${port}/exit?status=5`).catch(() => undefined);
      const status = await run.exited;
      expect(status, run.output()).toBe('status' in p ? p.status : 5);
      const how = part === 'app' ? 'exited with status 5' : 'exited with status 3';
      expect(run.output()).toContain(`! ${p.prog} (${p.name}) ${how}; stopping `);
      expect(run.output()).toMatch(new RegExp(`the launch exits with status ${status}\\n`));
      await expectNothingLeft(run, pids);
    });
  }

  it('under RBP_RESTART=on-failure the whole launch starts again, with back-off, one line per restart', async () => {
    const { env, operator } = chainEnv();
    const { run, port, pids } = await started(out, env, operator, { RBP_RESTART: 'on-failure', RBP_RESTART_FIRST_DELAY: '0.2' });
    try {
      for (const [n, delay] of [
        [1, '200ms'],
        [2, '400ms'],
      ] as const) {
        const app = await member(run.proc.pid!, PARTS.app.match);
        process.kill(await member(run.proc.pid!, PARTS.custom.match), 'SIGKILL');
        await waitOutput(run, `! restarting the app and its request flow in ${delay} (restart ${n}, RBP_RESTART=on-failure; last status 94)`);
        // Every member started again: the app too, as a new process.
        expect(await waitHttp(port, run)).toMatchObject({ status: 200 });
        expect(await member(run.proc.pid!, PARTS.app.match)).not.toBe(app);
      }
      expect(
        run
          .output()
          .split('\n')
          .filter((l) => l.startsWith('! restarting')),
      ).toHaveLength(2);
      expect(run.output().match(/- request flow ready/g)).toHaveLength(3);
    } finally {
      expect(await run.stop()).toBe(0);
    }
    await expectNothingLeft(run, pids);
  });
});

describe('a part of a request-flow launch ends (rbp deploy)', () => {
  it('rbp deploy starts the whole launch again, with back-off, one line per restart', async () => {
    const [port, appPort] = [await freePort(), await freePort()];
    const { env, operator } = chainEnv();
    const args = ['deploy', path.join(FIXTURES, 'flow-app'), '--out', path.join(tmpDir('rbp-deploy-parts-'), 'out'), '--buildpack', await flowBuildpack()];
    const proc = execa('node', [RBP, ...args, '--port', String(port), ...envArgs({ FLOW_RUNTIME: 'node', ...env })], {
      reject: false,
      all: true,
      env: { NO_COLOR: '1', RBP_APP_PORT: String(appPort), RBP_RESTART_FIRST_DELAY: '0.2', ...operator },
      forceKillAfterDelay: false,
    });
    let text = '';
    proc.all.on('data', (d: Buffer) => (text += d.toString()));
    const run: Running = { proc, output: () => text, exited: proc.then((r) => r.exitCode ?? -1), stop: async () => (proc.kill('SIGTERM'), run.exited) };
    try {
      await waitOutput(run, '- deployed:', 120_000);
      const app = await member(proc.pid!, PARTS.app.match);
      process.kill(await member(proc.pid!, PARTS.redirector.match), 'SIGKILL');
      await waitOutput(run, '! node (redirection proxy) was killed by SIGKILL; stopping ');
      await waitOutput(run, '! restarting the app in 200ms (restart 1, --restart on-failure; last exit status 92)');
      await waitOutput(run, /request flow ready[\s\S]*request flow ready/);
      expect(await member(proc.pid!, PARTS.app.match)).not.toBe(app);
      expect((await waitHttp(port, run)).status).toBe(200);
    } finally {
      await run.stop();
    }
  }, 180_000);
});

const varnishd = varnishdRequirement('the cache proxy part of a-part-ends.test.ts');

describeNeeding(varnishd, 'the cache proxy (Varnish) ends (rbp run)', () => {
  let out = '';
  beforeAll(async () => {
    const b = await buildFlowApp('flow-app-cache');
    expect(b.result.exitCode, b.result.all).toBe(0);
    out = b.out;
  });

  // varnishd runs until it is stopped: it has no end of its own to test.
  for (const sig of ['SIGKILL', 'SIGTERM'] as const) {
    it(`varnishd gets ${sig}: its worker and the app stop too, status 93`, async () => {
      const { run, pids } = await started(out, { FLOW_APP_CHILD: '1' }, {});
      expect(pids.length).toBeGreaterThanOrEqual(4);
      process.kill(await member(run.proc.pid!, /^\S*varnishd /), sig);
      expect(await run.exited, run.output()).toBe(93);
      expect(run.output()).toMatch(
        new RegExp(`! varnishd \\(cache proxy\\) (was killed by SIGKILL|exited with status \\d+); stopping app; the launch exits with status 93`),
      );
      await expectNothingLeft(run, pids);
    });
  }
});
