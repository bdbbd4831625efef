/**
 * App images (issue "Ship it", item 3; self-contained, reproducible, reused layers): `rbp build APP --out OUT --image DIR` writes the built app
 * as an OCI image layout shaped as the reference exporter shapes one (run image + launcher +
 * launch layers + /workspace, the lifecycle's labels and env), and podman (runc) runs it: the
 * default process answers 200 and the container stops cleanly on SIGTERM.
 * Needs podman, runc and skopeo (Debian), the run image (scripts/tools/run-image.sh, RBP_RUN_IMAGE)
 * and the reference launcher (scripts/tools/lifecycle.sh, RBP_TOOL_LIFECYCLE): in CI all are there
 * and a missing one fails; elsewhere the test says what is missing and is skipped.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import { execa } from 'execa';
import { afterAll, expect, it } from 'vitest';
import { referenceLauncher, runImageLayout } from '../../lib/package/app-image.ts';
import { readLayout, type ReadImage } from '../../lib/package/oci-layout.ts';
import { FIXTURES, freePort, have, rbp, ROOT, serve, tmpDir } from '../helpers/rbp.ts';
import { describeNeeding, requirement, requirementOfAll } from '../helpers/requirement.ts';
import { realTool } from '../helpers/tool-cache.ts';
import { body200, cleanupPodman, forgetImage, logs, lowerTmp, podman, runDetached, stop } from './podman.ts';
import { bp, passWith, scriptedApp } from '../lifecycle/helpers.ts';

const runImage = runImageLayout();
const launcher = referenceLauncher();
const missing = [
  ...(await Promise.all(['podman', 'runc', 'skopeo'].map(async (t) => ((await have(t)) ? [] : [`${t} (apt-get install ${t})`])))).flat(),
  ...(fs.existsSync(path.join(runImage, 'index.json')) ? [] : [`the run image at ${runImage} (scripts/tools/run-image.sh)`]),
  ...(fs.existsSync(launcher) ? [] : [`the reference launcher at ${launcher} (scripts/tools/lifecycle.sh)`]),
];
const imageTools = requirementOfAll(missing, 'app-image.test.ts');
const sws = process.env.RBP_TOOL_STATIC_WEB_SERVER;
const swsTool = realTool('RBP_TOOL_STATIC_WEB_SERVER', 'app-image.test.ts (the static site case)');
const root = requirement(process.getuid?.() === 0, {
  what: 'root',
  how: 'the full-disk case mounts a small tmpfs: run the tests as root, as .ci/run does',
  who: 'app-image.test.ts (the full-disk case)',
});
afterAll(cleanupPodman);

describeNeeding(imageTools, 'rbp build --image DIR', () => {
  it('CI has everything the app image needs', () => {
    expect(missing).toEqual([]);
  });

  it('writes an OCI image of the node app that podman runs: 200 from the default process, clean stop on SIGTERM', async () => {
    const image = path.join(lowerTmp('rbp-image-'), 'image');
    const r = await rbp(['build', path.join(FIXTURES, 'node-hello'), '--out', path.join(tmpDir('rbp-image-'), 'out'), '--image', image]);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stdout).toMatch(/app image: .*\(OCI layout, \d+ layers, sha256:[0-9a-f]{12}…, entrypoint \/cnb\/process\/web; \d+ written, 0 unchanged, /);

    const info = JSON.parse((await execa('skopeo', ['inspect', '--config', `oci:${image}:latest`])).stdout) as {
      config: { Env: string[]; Entrypoint: string[]; WorkingDir: string; Labels: Record<string, string> };
    };
    expect(info.config.Entrypoint).toEqual(['/cnb/process/web']);
    expect(info.config.WorkingDir).toBe('/workspace');
    expect(info.config.Env).toEqual(
      expect.arrayContaining(['CNB_LAYERS_DIR=/layers', 'CNB_APP_DIR=/workspace', expect.stringMatching(/^PATH=\/cnb\/process:/)]),
    );
    const lifecycle = JSON.parse(info.config.Labels['io.buildpacks.lifecycle.metadata']!) as {
      buildpacks: { key: string; layers: Record<string, { launch: boolean }> }[];
    };
    expect(lifecycle.buildpacks[0]!.key).toBe('rbp/node');
    expect(Object.keys(lifecycle.buildpacks[0]!.layers)).toEqual(expect.arrayContaining(['node', 'modules', 'launcher']));
    expect(JSON.parse(info.config.Labels['io.buildpacks.build.metadata']!).processes[0].type).toBe('web');

    const port = await freePort();
    const id = await runDetached(`oci:${image}:latest`, ['-e', `RBP_PUBLIC_PORT=${port}`]);
    const body = await body200(port);
    expect(body, await logs(id)).toContain('hello from node v24.15.0 (production)');
    expect(await stop(id)).toBe('0');
  }, 300_000);

  it.skipIf(swsTool.skip)(
    'a static site: its launch starts the server with no Node.js in the image, and the image holds the server the operator gave (no mount)',
    async () => {
      swsTool.path();
      expect(sws, 'RBP_TOOL_STATIC_WEB_SERVER (scripts/tools/static-web-server.sh)').toBeTruthy();
      const image = path.join(lowerTmp('rbp-image-'), 'image');
      const out = path.join(tmpDir('rbp-image-'), 'out');
      // Named as pack names an image: -t, twice.
      const r = await rbp(['build', path.join(FIXTURES, 'static-index-html'), '--out', out, '--image', image, '-t', 'site', '--tag', 'site-v1'], {
        env: { RBP_TOOL_STATIC_WEB_SERVER: sws! },
      });
      expect(r.exitCode, r.all).toBe(0);
      const index = JSON.parse(fs.readFileSync(path.join(image, 'index.json'), 'utf8')) as {
        manifests: { digest: string; annotations: Record<string, string> }[];
      };
      expect(index.manifests.map((m) => m.annotations['org.opencontainers.image.ref.name'])).toEqual(['site', 'site-v1']);
      expect(new Set(index.manifests.map((m) => m.digest)).size).toBe(1);
      expect(r.all).toContain('no Node.js in the image');
      expect(r.all).toContain(`copied RBP_TOOL_STATIC_WEB_SERVER=${sws} into the launch layer static-web-server`);
      expect(fs.existsSync(path.join(out, 'layers/rbp_static/launcher/stored-plan.sh'))).toBe(true);
      expect(fs.existsSync(path.join(out, 'layers/rbp_static/launcher/planner-node'))).toBe(false);
      const port = await freePort();
      const id = await runDetached(`oci:${image}:site-v1`, ['-e', `RBP_PUBLIC_PORT=${port}`]);
      const body = await body200(port);
      expect(body, await logs(id)).toMatch(/<html/i);
      expect(await stop(id)).toBe('0');
    },
    300_000,
  );

  it('the same input gives the same image, cold or warm; a warm export rewrites only the layers that changed', async () => {
    const digest = (text: string) => /app image: .*?(sha256:[0-9a-f]{12})….*; (\d+) written, (\d+) unchanged/.exec(text);
    const app = tmpDir('rbp-image-app-');
    fs.cpSync(path.join(FIXTURES, 'node-hello'), app, { recursive: true });
    const image = path.join(tmpDir('rbp-image-'), 'image');
    const out = path.join(tmpDir('rbp-image-'), 'out');
    const cold = await rbp(['build', app, '--out', out, '--image', image]);
    expect(cold.exitCode, cold.all).toBe(0);
    const warm = await rbp(['build', app, '--out', out, '--image', image]);
    expect(warm.exitCode, warm.all).toBe(0);
    const [c, w] = [digest(cold.stdout), digest(warm.stdout)];
    expect(c && w, `${cold.stdout}\n${warm.stdout}`).toBeTruthy();
    expect(w![1]).toBe(c![1]);
    // Nothing changed: every layer the app adds is the previous image's (run image layers aside).
    expect(w![2]).toBe('0');
    // No previous image: every layer written afresh gives the same digest as the reused ones.
    fs.rmSync(image, { recursive: true, force: true });
    const fresh = await rbp(['build', app, '--out', out, '--image', image]);
    expect(digest(fresh.stdout)?.[1], fresh.all).toBe(c![1]);
    expect(digest(fresh.stdout)?.[3], fresh.all).toBe('0');
    // A change to the app: only the app's layer (and the config) is written again.
    fs.appendFileSync(path.join(app, 'server.js'), '\n// changed\n');
    const changed = await rbp(['build', app, '--out', out, '--image', image]);
    const ch = digest(changed.stdout);
    expect(ch?.[1]).not.toBe(c![1]);
    expect(Number(ch?.[2]), changed.stdout).toBe(1);
  }, 600_000);

  it('two clean builds of the same app in two folders give the same image, which names nothing of the build host; SOURCE_DATE_EPOCH dates it; rbp run OUT still serves', async () => {
    const builds: { out: string; image: string }[] = [];
    for (const n of [1, 2]) {
      const where = tmpDir(`rbp-image-${n}-`);
      const app = path.join(where, 'app');
      fs.cpSync(path.join(FIXTURES, 'node-hello'), app, { recursive: true });
      const b = { out: path.join(where, 'out'), image: path.join(where, 'image') };
      const r = await rbp(['build', app, '--out', b.out, '--image', b.image]);
      expect(r.exitCode, r.all).toBe(0);
      builds.push(b);
    }
    const [one, two] = builds.map((b) => readLayout(b.image));
    // Every layer, then the image: what differs says which part still depends on the folder (each
    // checked softly, so that one difference does not hide the others or the checks below).
    const madeBy = (img: ReadImage, d: string) => img.config.history?.filter((h) => !h.empty_layer)[img.config.rootfs.diff_ids.indexOf(d)]?.created_by ?? d;
    expect
      .soft(
        two!.config.rootfs.diff_ids.filter((d) => !one!.config.rootfs.diff_ids.includes(d)).map((d) => madeBy(two!, d)),
        'layers of the second build not in the first',
      )
      .toEqual([]);
    expect.soft(two!.manifestDigest).toBe(one!.manifestDigest);
    // The run's temporary root holds both builds, their apps and caches; the checkout and the tool cache are the host's too.
    const host = [os.tmpdir(), ROOT, path.join(os.homedir(), '.cache')];
    expect.soft(await hostPathsIn(one!, host)).toEqual([]);
    // Nothing of the buildpacks' own bookkeeping in a launch layer or the app.
    expect((await entriesOf(one!)).filter((e) => /(^|\/)\.rbp/.test(e))).toEqual([]);

    // SOURCE_DATE_EPOCH dates the image and every history entry, as the lifecycle's exporter does.
    const epoch = await rbp(['build', path.join(path.dirname(builds[0]!.out), 'app'), '--out', builds[0]!.out, '--image', builds[0]!.image], {
      env: { SOURCE_DATE_EPOCH: '1700000000' },
    });
    expect(epoch.exitCode, epoch.all).toBe(0);
    const epochConfig = readLayout(builds[0]!.image).config;
    expect(epochConfig.created).toBe('2023-11-14T22:13:20Z');
    expect(new Set(epochConfig.history!.map((h) => h.created))).toEqual(new Set(['2023-11-14T22:13:20Z']));
    expect(epochConfig.rootfs.diff_ids).toEqual(one!.config.rootfs.diff_ids);

    const served = await serve(builds[0]!.out, {}, async (port) => {
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toContain('hello from node');
    });
    expect(served.output).not.toMatch(/error/i);
  }, 600_000);

  it('a buildpack that names its layers by their absolute paths: a warning names each such layer and process, and the image links OUT to /layers and /workspace so that they run', async () => {
    const app = scriptedApp({
      'a/detect': passWith(),
      'a/build': [
        'L="$CNB_LAYERS_DIR"',
        `mkdir -p "$L/web/bin" && printf '[types]\\nlaunch = true\\n' > "$L/web.toml" && echo hello > "$L/web/greeting"`,
        `printf '#!/bin/sh\\ncat %s/web/greeting\\n' "$L" > "$L/web/bin/hello" && chmod +x "$L/web/bin/hello"`,
        `printf '[[processes]]\\ntype = "web"\\ncommand = ["%s/web/bin/hello"]\\ndefault = true\\n' "$L" > "$L/launch.toml"`,
      ].join('\n'),
    });
    const image = path.join(lowerTmp('rbp-image-'), 'image');
    const out = path.join(lowerTmp('rbp-image-'), 'out');
    const r = await rbp(['build', app, '--out', out, '--image', image, '--buildpack', bp('a')]);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain(`Layer: 'web', Created by buildpack: test/a@0.0.1 names the build folder ${out}`);
    expect(r.all).toContain(`the process web of test/a names the build folder ${out}`);
    const ran = await podman(['run', '--rm', '--passwd=false', '--read-only', '--user', '12345:0', `oci:${image}:latest`]);
    forgetImage(`localhost${image}`);
    expect(ran.exitCode, ran.all).toBe(0);
    expect(ran.stdout.trim()).toBe('hello');
  }, 300_000);

  it.skipIf(root.skip)(
    'a full disk: one clear error, exit 62, and the previous image and OUT as they were',
    async () => {
      root.value();
      expect(process.getuid?.(), 'this test mounts a small tmpfs (root)').toBe(0);
      const mnt = tmpDir('rbp-full-disk-');
      await execa('mount', ['-t', 'tmpfs', '-o', 'size=160m', 'tmpfs', mnt]);
      try {
        const app = tmpDir('rbp-image-app-');
        fs.cpSync(path.join(FIXTURES, 'static-index-html'), app, { recursive: true });
        const image = path.join(mnt, 'image');
        const out = path.join(tmpDir('rbp-image-'), 'out');
        const env = { RBP_OPERATOR_TOOLS: 'in-place', RBP_TOOL_STATIC_WEB_SERVER: sws ?? '/usr/bin/true' };
        const first = await rbp(['build', app, '--out', out, '--image', image], { env });
        expect(first.exitCode, first.all).toBe(0);
        const index = fs.readFileSync(path.join(image, 'index.json'), 'utf8');
        const rbpToml = fs.readFileSync(path.join(out, 'rbp.toml'), 'utf8');
        // Fill the disk, then change the app.
        const free = Number((await execa('df', ['--output=avail', '-B1', mnt])).stdout.split('\n')[1]);
        await execa('fallocate', ['-l', String(Math.max(0, free - 512 * 1024)), path.join(mnt, 'filler')]);
        fs.appendFileSync(path.join(app, 'index.html'), '<!-- changed -->\n');
        const full = await rbp(['build', app, '--out', out, '--image', image], { env });
        expect(full.exitCode, full.all).toBe(62);
        expect(full.all).toContain('(error id: platform/image/disk-full)');
        expect(full.all).not.toMatch(/\n\s+at /);
        expect(fs.readFileSync(path.join(image, 'index.json'), 'utf8')).toBe(index);
        expect(fs.readFileSync(path.join(out, 'rbp.toml'), 'utf8')).toBe(rbpToml);
        expect(fs.readdirSync(mnt).sort()).toEqual(['filler', 'image']);
        const rendered = /! ERROR[\s\S]*?\(error id: [^)]*\)/
          .exec(full.all)![0]
          .replaceAll(image, '<image>')
          .replace(/ENOSPC: [^)]*/, 'ENOSPC: …');
        expect(rendered).toMatchSnapshot();
      } finally {
        await execa('umount', [mnt]);
      }
    },
    300_000,
  );
});

/** Where a layer the app image adds to its run image (its files, link targets), its labels or its env name one of `paths`. */
async function hostPathsIn(image: ReadImage, paths: string[]): Promise<string[]> {
  const found: string[] = [];
  const look = (where: string, text: string) => {
    for (const p of paths) if (text.includes(p)) found.push(`${where} names ${p}`);
  };
  for (const [k, v] of Object.entries(image.config.config?.Labels ?? {})) look(`label ${k}`, v);
  for (const e of image.config.config?.Env ?? []) look('env', e);
  for (const file of image.layerFiles.slice(readLayout(runImage).manifest.layers.length)) {
    await tar.t({
      file,
      onReadEntry: (entry) => {
        look(`the path of ${entry.path}`, `/${entry.path}`);
        if (entry.linkpath) look(`link ${entry.path}`, entry.linkpath);
        const chunks: Buffer[] = [];
        entry.on('data', (c: Buffer) => chunks.push(c));
        entry.on('end', () => look(entry.path, Buffer.concat(chunks).toString('latin1')));
      },
    });
  }
  return found;
}

/** Every entry of the layers the app image adds to its run image. */
async function entriesOf(image: ReadImage): Promise<string[]> {
  const run = readLayout(runImage).manifest.layers.length;
  const names: string[] = [];
  for (const file of image.layerFiles.slice(run)) await tar.t({ file, onReadEntry: (e) => names.push(e.path) });
  return names;
}
