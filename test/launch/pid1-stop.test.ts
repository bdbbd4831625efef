/**
 * Issue 30 item 6: in an app image the launch is PID 1, and the kernel drops a SIGTERM that PID 1
 * does not handle; a Node.js app with no SIGTERM handler would wait out `podman stop`'s grace period
 * and die of SIGKILL (137). The launch runs the app under a minimal init when it is PID 1
 * (lib/launch/pid1.ts): `podman stop` ends it at once, with the app's status (143: SIGTERM). The
 * image is `rbp build --image`'s (the reference launcher as entrypoint, as pack's), run with
 * `--passwd=false` and no mounts. Needs podman, runc, the run image and the reference launcher: in CI
 * a missing one fails; elsewhere the test says what is missing and is skipped.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { referenceLauncher, runImageLayout } from '../../lib/package/app-image.ts';
import { underInit } from '../../lib/launch/pid1.ts';
import { FIXTURES, freePort, have, rbp, tmpDir } from '../helpers/rbp.ts';
import { body200, cleanupPodman, logs, lowerTmp, podman, runDetached } from '../package/podman.ts';
import { describeNeeding, requirementOfAll } from '../helpers/requirement.ts';

const runImage = runImageLayout();
const launcher = referenceLauncher();
const missing = [
  ...(await Promise.all(['podman', 'runc'].map(async (t) => ((await have(t)) ? [] : [`${t} (apt-get install ${t})`])))).flat(),
  ...(fs.existsSync(path.join(runImage, 'index.json')) ? [] : [`the run image at ${runImage} (scripts/tools/run-image.sh)`]),
  ...(fs.existsSync(launcher) ? [] : [`the reference launcher at ${launcher} (scripts/tools/lifecycle.sh)`]),
];
const appImage = requirementOfAll(missing, 'pid1-stop.test.ts (podman stop on an app image)');
afterAll(cleanupPodman);

describe('the minimal init', () => {
  const run = (app: string[], signal?: NodeJS.Signals) =>
    new Promise<{ status: number | null; ms: number }>((resolve) => {
      const t0 = performance.now();
      const child = spawn(underInit(app)[0]!, underInit(app).slice(1), { stdio: 'ignore' });
      if (signal) setTimeout(() => child.kill(signal), 300);
      child.on('exit', (status) => resolve({ status, ms: performance.now() - t0 }));
    });

  it('exits with its app’s status', async () => {
    expect((await run(['sh', '-c', 'exit 3'])).status).toBe(3);
  });

  it('passes SIGTERM on to an app that does not handle it: 143 at once', async () => {
    const r = await run(['sleep', '30'], 'SIGTERM');
    expect(r.status).toBe(143);
    expect(r.ms).toBeLessThan(20_000);
  });

  it('keeps the status of an app that handles SIGTERM and exits 0', async () => {
    expect((await run(['sh', '-c', 'trap "exit 0" TERM; sleep 30 & wait'], 'SIGTERM')).status).toBe(0);
  });
});

describeNeeding(appImage, 'podman stop on an app image whose app has no SIGTERM handler', () => {
  it('CI has everything the app image needs', () => {
    expect(missing).toEqual([]);
  });

  it('stops at once with 143, well inside the grace period (no SIGKILL)', async () => {
    const image = path.join(lowerTmp('rbp-pid1-'), 'image');
    const r = await rbp(['build', path.join(FIXTURES, 'node-no-sigterm'), '--out', path.join(tmpDir('rbp-pid1-'), 'out'), '--image', image]);
    expect(r.exitCode, r.all).toBe(0);
    const port = await freePort();
    const id = await runDetached(`oci:${image}:latest`, ['--passwd=false', '-e', `RBP_PUBLIC_PORT=${port}`]);
    const body = await body200(port);
    expect(body, await logs(id)).toContain('no SIGTERM handler');
    // The app is not PID 1: the init is, and the app is its child.
    expect(body).not.toContain('pid 1\n');
    const grace = 20;
    const t0 = performance.now();
    const stopped = await podman(['stop', '-t', String(grace), id]);
    const seconds = (performance.now() - t0) / 1000;
    expect(stopped.exitCode, stopped.all).toBe(0);
    const code = (await podman(['inspect', id, '--format', '{{.State.ExitCode}}'])).stdout.trim();
    const log = await logs(id);
    expect(code, log).toBe('143');
    expect(log).toContain('under a minimal init (the launch is PID 1');
    // Without the init: the whole grace period, then SIGKILL (137). With it, well under a second on
    // an idle machine; the bound is loose so that a loaded CI machine does not fail it.
    console.log(`podman stop took ${seconds.toFixed(2)} s (grace ${grace} s), exit ${code}`);
    expect(seconds).toBeLessThan(grace / 2);
  }, 300_000);
});
