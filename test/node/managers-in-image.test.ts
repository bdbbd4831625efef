/**
 * The package manager the build used, in an app image: its launch layer's bin/ is on the image's
 * PATH, so a start command that calls it runs in the container as it does in `rbp run`. Needs podman,
 * runc and skopeo, the run image and the reference launcher, as test/package/app-image.test.ts does:
 * in CI all are there and a missing one fails; elsewhere the test says what is missing and is skipped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { referenceLauncher, runImageLayout } from '../../lib/package/app-image.ts';
import { FIXTURES, envArgs, freePort, have, rbp, tmpDir } from '../helpers/rbp.ts';
import { describeNeeding, requirementOfAll } from '../helpers/requirement.ts';
import { body200, cleanupPodman, logs, lowerTmp, runDetached, stop } from '../package/podman.ts';

const missing = [
  ...(await Promise.all(['podman', 'runc', 'skopeo'].map(async (t) => ((await have(t)) ? [] : [`${t} (apt-get install ${t})`])))).flat(),
  ...(fs.existsSync(path.join(runImageLayout(), 'index.json')) ? [] : [`the run image at ${runImageLayout()} (scripts/tools/run-image.sh)`]),
  ...(fs.existsSync(referenceLauncher()) ? [] : [`the reference launcher at ${referenceLauncher()} (scripts/tools/lifecycle.sh)`]),
];
afterAll(cleanupPodman);

describeNeeding(requirementOfAll(missing, 'managers-in-image.test.ts'), 'the package manager in an app image', () => {
  it('a custom pnpm build with no packageManager: CC_RUN_COMMAND="pnpm run serve" starts the app in the container, which runs pnpm too', async () => {
    const image = path.join(lowerTmp('rbp-image-'), 'image');
    const run = 'pnpm run serve';
    const env = {
      CC_NODE_BUILD_TOOL: 'custom',
      CC_CUSTOM_BUILD_TOOL: 'pnpm install --frozen-lockfile && pnpm run build',
      CC_NODE_DEV_DEPENDENCIES: 'install',
      CC_RUN_COMMAND: run,
    };
    const out = path.join(tmpDir('rbp-image-'), 'out');
    const r = await rbp(['build', path.join(FIXTURES, 'node-custom-pnpm'), '--out', out, '--image', image, '--type', 'node', ...envArgs(env)]);
    expect(r.exitCode, r.all).toBe(0);
    const port = await freePort();
    const id = await runDetached(`oci:${image}:latest`, ['-e', `RBP_PUBLIC_PORT=${port}`, '-e', `CC_RUN_COMMAND=${run}`]);
    const body = await body200(port);
    expect(body, await logs(id)).toContain('"manager":"pnpm 10.');
    expect(body).toContain('"greeting":"built by tsc"');
    // It stops on SIGTERM; `pnpm run` says ELIFECYCLE (status 1) when its script ends on the signal, even cleanly.
    expect(await stop(id), await logs(id)).toMatch(/^(0|1|143)$/);
  }, 300_000);
});
