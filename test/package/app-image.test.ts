/**
 * App images (issue "Ship it", item 3): `rbp build APP --out OUT --image DIR` writes the built app
 * as an OCI image layout shaped as the reference exporter shapes one (run image + launcher +
 * launch layers + /workspace, the lifecycle's labels and env), and podman (runc) runs it: the
 * default process answers 200 and the container stops cleanly on SIGTERM.
 * Needs podman, runc and skopeo (Debian), the run image (scripts/tools/run-image.sh, RBP_RUN_IMAGE)
 * and the reference launcher (scripts/tools/lifecycle.sh, RBP_TOOL_LIFECYCLE): in CI all are there
 * and a missing one fails; elsewhere the test says what is missing and is skipped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { referenceLauncher, runImageLayout } from '../../lib/package/app-image.ts';
import { FIXTURES, freePort, have, rbp, tmpDir } from '../helpers/rbp.ts';
import { body200, cleanupPodman, logs, lowerTmp, runDetached, stop } from './podman.ts';

const runImage = runImageLayout();
const launcher = referenceLauncher();
const missing = [
  ...(await Promise.all(['podman', 'runc', 'skopeo'].map(async (t) => ((await have(t)) ? [] : [`${t} (apt-get install ${t})`])))).flat(),
  ...(fs.existsSync(path.join(runImage, 'index.json')) ? [] : [`the run image at ${runImage} (scripts/tools/run-image.sh)`]),
  ...(fs.existsSync(launcher) ? [] : [`the reference launcher at ${launcher} (scripts/tools/lifecycle.sh)`]),
];
const inCi = Boolean(process.env.CI);
const sws = process.env.RBP_TOOL_STATIC_WEB_SERVER;
if (missing.length && !inCi) console.warn(`app-image.test.ts skipped: missing ${missing.join(', ')}`);
afterAll(cleanupPodman);

describe.skipIf(missing.length > 0 && !inCi)('rbp build --image DIR', () => {
  it('CI has everything the app image needs', () => {
    expect(missing).toEqual([]);
  });

  it('writes an OCI image of the node app that podman runs: 200 from the default process, clean stop on SIGTERM', async () => {
    const image = path.join(lowerTmp('rbp-image-'), 'image');
    const r = await rbp(['build', path.join(FIXTURES, 'node-hello'), '--out', path.join(tmpDir('rbp-image-'), 'out'), '--image', image]);
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
    const id = await runDetached(`oci:${image}:latest`, ['-e', `RBP_PUBLIC_PORT=${port}`]);
    const body = await body200(port);
    expect(body, await logs(id)).toContain('hello from node v24.15.0 (production)');
    expect(await stop(id)).toBe('0');
  }, 300_000);

  it.skipIf(!sws && !inCi)('a static site: its launch script starts the server with no Node.js in the image, not even rbp’s own', async () => {
    expect(sws, 'RBP_TOOL_STATIC_WEB_SERVER (scripts/tools/static-web-server.sh)').toBeTruthy();
    const image = path.join(lowerTmp('rbp-image-'), 'image');
    const out = path.join(tmpDir('rbp-image-'), 'out');
    // Named as pack names an image: -t, twice.
    const r = await rbp(['build', path.join(FIXTURES, 'static-index-html'), '--out', out, '--image', image, '-t', 'site', '--tag', 'site-v1'], { env: { RBP_TOOL_STATIC_WEB_SERVER: sws! } });
    expect(r.exitCode, r.all).toBe(0);
    const index = JSON.parse(fs.readFileSync(path.join(image, 'index.json'), 'utf8')) as { manifests: { digest: string; annotations: Record<string, string> }[] };
    expect(index.manifests.map((m) => m.annotations['org.opencontainers.image.ref.name'])).toEqual(['site', 'site-v1']);
    expect(new Set(index.manifests.map((m) => m.digest)).size).toBe(1);
    expect(r.all).toContain('no Node.js in the image');
    expect(fs.readFileSync(path.join(out, 'layers/rbp_static/launcher/bin/launch'), 'utf8')).toContain("node=''");
    // The server is the operator's: the container sees it where the build did.
    const toolDir = path.dirname(path.dirname(sws!));
    const port = await freePort();
    const id = await runDetached(`oci:${image}:site-v1`, ['-e', `RBP_PUBLIC_PORT=${port}`, '-v', `${toolDir}:${toolDir}:ro`]);
    const body = await body200(port);
    expect(body, await logs(id)).toMatch(/<html/i);
    expect(await stop(id)).toBe('0');
  }, 300_000);
});
