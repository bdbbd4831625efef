/**
 * The launch as PID 1, in an app image (`rbp build --image`, run by podman with runc, the reference
 * launcher as entrypoint). The kernel delivers a signal to PID 1 only when it handles it, so the
 * launch stays as PID 1 and supervises even an app it would otherwise become: `podman stop` ends an
 * app with no SIGTERM handler at once (143), the orphans the kernel gives PID 1 are reaped, and when
 * any part of a request-flow launch ends (each middleware, the app; killed by a signal or exiting on
 * its own) the container ends with the status and the one line that say which. The app is
 * fixtures/flow-app as a node app; the access proxy and the redirector are the operator's programs,
 * here the fixture's real proxy. (Varnish is not in the run image: the cache proxy's end is tested
 * under rbp run, test/launch/a-part-ends.test.ts.) Needs podman, runc, the run image and the
 * reference launcher: in CI a missing one fails; elsewhere the test says what is missing and is
 * skipped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referenceLauncher, runImageLayout } from '../../lib/package/app-image.ts';
import { FIXTURES, freePort, have, rbp, tmpDir } from '../helpers/rbp.ts';
import { body200, cleanupPodman, logs, lowerTmp, podman, runDetached } from '../package/podman.ts';
import { describeNeeding, requirementOfAll } from '../helpers/requirement.ts';
import { descendants, member } from './processes.ts';

const runImage = runImageLayout();
const launcher = referenceLauncher();
const missing = [
  ...(await Promise.all(['podman', 'runc'].map(async (t) => ((await have(t)) ? [] : [`${t} (apt-get install ${t})`])))).flat(),
  ...(fs.existsSync(path.join(runImage, 'index.json')) ? [] : [`the run image at ${runImage} (scripts/tools/run-image.sh)`]),
  ...(fs.existsSync(launcher) ? [] : [`the reference launcher at ${launcher} (scripts/tools/lifecycle.sh)`]),
];
const appImage = requirementOfAll(missing, 'pid1-stop.test.ts (the launch as PID 1 of an app image)');
afterAll(cleanupPodman);

/** The container's PID 1, as the host sees it. */
async function pid1(id: string): Promise<number> {
  return Number((await podman(['inspect', id, '--format', '{{.State.Pid}}'])).stdout.trim());
}

async function exitCode(id: string): Promise<string> {
  await podman(['wait', id]);
  return (await podman(['inspect', id, '--format', '{{.State.ExitCode}}'])).stdout.trim();
}

describeNeeding(appImage, 'the launch as PID 1', () => {
  it('CI has everything the app image needs', () => {
    expect(missing).toEqual([]);
  });

  it('podman stop ends an app with no SIGTERM handler at once with 143, well inside the grace period', async () => {
    const image = path.join(lowerTmp('rbp-pid1-'), 'image');
    const r = await rbp(['build', path.join(FIXTURES, 'node-no-sigterm'), '--out', path.join(tmpDir('rbp-pid1-'), 'out'), '--image', image]);
    expect(r.exitCode, r.all).toBe(0);
    const port = await freePort();
    const id = await runDetached(`oci:${image}:latest`, ['--passwd=false', '-e', `RBP_PUBLIC_PORT=${port}`]);
    const body = await body200(port);
    expect(body, await logs(id)).toContain('no SIGTERM handler');
    // The app is not PID 1: the launch is, and the app is its child.
    expect(body).not.toContain('pid 1\n');
    const grace = 20;
    const t0 = performance.now();
    const stopped = await podman(['stop', '-t', String(grace), id]);
    const seconds = (performance.now() - t0) / 1000;
    expect(stopped.exitCode, stopped.all).toBe(0);
    const code = (await podman(['inspect', id, '--format', '{{.State.ExitCode}}'])).stdout.trim();
    const log = await logs(id);
    expect(code, log).toBe('143');
    expect(log).toContain('the launch is PID 1: it passes stop signals on and reaps orphans');
    // Without the launch handling SIGTERM: the whole grace period, then SIGKILL (137). The bound is
    // loose so that a loaded CI machine does not fail it.
    expect(seconds).toBeLessThan(grace / 2);
  }, 300_000);

  describe('a request-flow launch', () => {
    let image = '';
    beforeAll(async () => {
      const app = tmpDir('rbp-pid1-flow-');
      fs.cpSync(path.join(FIXTURES, 'flow-app'), app, { recursive: true });
      fs.writeFileSync(
        path.join(app, 'package.json'),
        JSON.stringify({ name: 'flow-app', version: '1.0.0', private: true, scripts: { start: 'node server.js' } }),
      );
      image = path.join(lowerTmp('rbp-pid1-flow-'), 'image');
      const r = await rbp(['build', app, '--type', 'node', '--out', path.join(tmpDir('rbp-pid1-flow-'), 'out'), '--image', image]);
      expect(r.exitCode, r.all).toBe(0);
    }, 300_000);

    const MW = (name: string, crash?: boolean) => `node middleware.mjs ${name} @@LISTEN_PORT@@ @@FORWARD_PORT@@${crash ? ' --crash-after 4000' : ''}`;
    async function start(crashing?: string): Promise<{ id: string; port: number }> {
      const [port, appPort] = [await freePort(), await freePort()];
      const env = {
        RBP_PUBLIC_PORT: String(port),
        RBP_APP_PORT: String(appPort),
        FLOW_APP_CHILD: '1',
        CC_REQUEST_FLOW: 'custom',
        CC_REQUEST_FLOW_CUSTOM: MW('custom', crashing === 'custom'),
        ACCESSPROXY_CHALLENGE_SECRET: 's1',
        RBP_ACCESSPROXY_COMMAND: MW('accessproxy', crashing === 'accessproxy'),
        CC_REDIRECTOR_PROJECT_KEY: 's2',
        RBP_REDIRECTOR_COMMAND: MW('redirector', crashing === 'redirector'),
      };
      const id = await runDetached(
        `oci:${image}:latest`,
        Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
      );
      expect(await body200(port), await logs(id)).toContain('hello from flow-app');
      return { id, port };
    }

    const PARTS = {
      app: { match: /^node server\.js/, name: 'app', status: undefined },
      custom: { match: /middleware\.mjs custom/, name: 'custom middleware', status: 94 },
      accessproxy: { match: /middleware\.mjs accessproxy/, name: 'access proxy', status: 91 },
      redirector: { match: /middleware\.mjs redirector/, name: 'redirection proxy', status: 92 },
    } as const;

    for (const [part, p] of Object.entries(PARTS)) {
      for (const how of ['SIGKILL', 'SIGTERM', 'exit'] as const) {
        it(`${part}: ${how === 'exit' ? 'it exits on its own' : how}; the container ends with the status and the line that name it`, async () => {
          const { id, port } = await start(how === 'exit' ? part : undefined);
          if (how !== 'exit') process.kill(await member(await pid1(id), p.match), how);
          else if (part === 'app') await fetch(`http://127.0.0.1:${port}/exit?status=5`).catch(() => undefined);
          const code = await exitCode(id);
          const log = await logs(id);
          const ended =
            how === 'SIGKILL'
              ? 'was killed by SIGKILL'
              : how === 'SIGTERM'
                ? 'exited with status 0'
                : part === 'app'
                  ? 'exited with status 5'
                  : 'exited with status 3';
          expect(log).toContain(`node (${p.name}) ${ended}; stopping `);
          const own = how === 'SIGKILL' ? '137' : how === 'SIGTERM' ? '0' : '5';
          expect(code, log).toBe(p.status === undefined ? own : String(p.status));
        }, 120_000);
      }
    }

    it('reaps the orphans the kernel gives it', async () => {
      const { id, port } = await start();
      const init = await pid1(id);
      expect(await (await fetch(`http://127.0.0.1:${port}/orphan`)).text()).toBe('orphaned\n');
      // The orphan becomes the launch's child once its parent exited; once it ends, it is reaped.
      let orphan: number | undefined;
      for (let i = 0; i < 50 && !orphan; i++) {
        orphan = descendants(init).find((d) => d.ppid === init && d.cmd === 'sleep 1')?.pid;
        if (!orphan) await new Promise((r) => setTimeout(r, 20));
      }
      expect(orphan, JSON.stringify(descendants(init))).toBeDefined();
      await new Promise((r) => setTimeout(r, 2000));
      expect(descendants(init).filter((d) => d.pid === orphan || (d.ppid === init && d.state === 'Z'))).toEqual([]);
      await podman(['stop', '-t', '10', id]);
    }, 120_000);
  });
});
