/**
 * App images (issue "Ship it", item 3): `rbp build APP --out OUT --image DIR` writes the built app
 * as an OCI image layout shaped as the reference exporter shapes one (run image + launcher +
 * launch layers + /workspace, the lifecycle's labels and env), and podman (runc) runs it: the
 * default process answers 200 and the container stops cleanly on SIGTERM.
 * Needs podman, runc and skopeo (Debian), the run image (scripts/tools/run-image.sh, RBP_RUN_IMAGE)
 * and the reference launcher (scripts/tools/lifecycle.sh, RBP_TOOL_LIFECYCLE): in CI all are there
 * and a missing one fails; elsewhere the test says what is missing and is skipped.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { referenceLauncher, runImageLayout } from '../../lib/package/app-image.ts';
import { FIXTURES, freePort, have, rbp, tmpDir } from '../helpers/rbp.ts';

const runImage = runImageLayout();
const launcher = referenceLauncher();
const missing = [
  ...(await Promise.all(['podman', 'runc', 'skopeo'].map(async (t) => ((await have(t)) ? [] : [`${t} (apt-get install ${t})`])))).flat(),
  ...(fs.existsSync(path.join(runImage, 'index.json')) ? [] : [`the run image at ${runImage} (scripts/tools/run-image.sh)`]),
  ...(fs.existsSync(launcher) ? [] : [`the reference launcher at ${launcher} (scripts/tools/lifecycle.sh)`]),
];
const inCi = Boolean(process.env.CI);
if (missing.length && !inCi) console.warn(`app-image.test.ts skipped: missing ${missing.join(', ')}`);

// This sandbox may not raise resource limits inside a container: podman's default ulimits are
// turned off for the containers these tests start (containers.conf, default_ulimits = []).
const conf = path.join(tmpDir('rbp-podman-'), 'containers.conf');
fs.writeFileSync(conf, '[containers]\ndefault_ulimits = []\n');
const podmanEnv = { ...process.env, CONTAINERS_CONF: conf };
const started: string[] = [];
const cleanup: string[] = [];
afterAll(async () => {
  for (const id of started) {
    const image = await execa('podman', ['inspect', id, '--format', '{{.Image}}'], { env: podmanEnv, reject: false });
    await execa('podman', ['rm', '-f', id], { env: podmanEnv, reject: false });
    if (image.exitCode === 0) await execa('podman', ['rmi', '-f', image.stdout.trim()], { env: podmanEnv, reject: false });
  }
  for (const dir of cleanup) fs.rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(missing.length > 0 && !inCi)('rbp build --image DIR', () => {
  it('CI has everything the app image needs', () => {
    expect(missing).toEqual([]);
  });

  it('writes an OCI image of the node app that podman runs: 200 from the default process, clean stop on SIGTERM', async () => {
    const work = tmpDir('rbp-image-');
    // podman names an oci: image after its path, and image names are lower case.
    const image = path.join(os.tmpdir(), `rbp-image-${crypto.randomBytes(6).toString('hex')}`);
    cleanup.push(image);
    const r = await rbp(['build', path.join(FIXTURES, 'node-hello'), '--out', path.join(work, 'out'), '--image', image]);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stdout).toMatch(/app image: .*\(OCI layout, \d+ layers, sha256:[0-9a-f]{12}…, entrypoint \/cnb\/process\/web\)/);

    const info = JSON.parse((await execa('skopeo', ['inspect', '--config', `oci:${image}:latest`])).stdout) as {
      config: { Env: string[]; Entrypoint: string[]; WorkingDir: string; Labels: Record<string, string> };
    };
    expect(info.config.Entrypoint).toEqual(['/cnb/process/web']);
    expect(info.config.WorkingDir).toBe('/workspace');
    expect(info.config.Env).toEqual(expect.arrayContaining(['CNB_LAYERS_DIR=/layers', 'CNB_APP_DIR=/workspace', expect.stringMatching(/^PATH=\/cnb\/process:/)]));
    const lifecycle = JSON.parse(info.config.Labels['io.buildpacks.lifecycle.metadata']!) as { buildpacks: { key: string; layers: Record<string, { launch: boolean }> }[] };
    expect(lifecycle.buildpacks[0]!.key).toBe('rbp/node');
    expect(Object.keys(lifecycle.buildpacks[0]!.layers)).toEqual(expect.arrayContaining(['node', 'modules', 'launcher']));
    expect(JSON.parse(info.config.Labels['io.buildpacks.build.metadata']!).processes[0].type).toBe('web');

    const port = await freePort();
    const run = await execa('podman', ['--runtime', 'runc', 'run', '-d', '--network', 'host', '-e', `RBP_PUBLIC_PORT=${port}`, `oci:${image}:latest`], { env: podmanEnv });
    const id = run.stdout.trim().split('\n').at(-1)!;
    started.push(id);
    let body = '';
    for (let i = 0; i < 100 && !body; i++) {
      body = await fetch(`http://127.0.0.1:${port}/`).then((x) => (x.status === 200 ? x.text() : ''), () => '');
      if (!body) await new Promise((res) => setTimeout(res, 200));
    }
    expect(body).toContain('hello from node v24.15.0 (production)');
    await execa('podman', ['stop', '-t', '10', id], { env: podmanEnv });
    const exit = await execa('podman', ['inspect', id, '--format', '{{.State.ExitCode}}'], { env: podmanEnv });
    expect(exit.stdout.trim()).toBe('0');
  }, 300_000);
});
