/**
 * The builder (issue "Ship it", item 2), validated as a platform uses it: `rbp builder --out DIR`
 * writes the builder, build, run and lifecycle images; podman runs the reference lifecycle's `creator`
 * inside the builder image on a fixture app (with --passwd=false: podman adds no passwd line for the
 * build user, as Docker and Kubernetes add none), exporting the app image to an OCI layout; podman
 * runs that app image, which answers 200 and stops cleanly on SIGTERM. A node fixture (Node.js
 * installed by the buildpack from the npm registry), a static fixture (Static Web Server given by the
 * operator, as a build-config variable naming a binary the build container mounts: the buildpack
 * copies it into the image, which then runs with no mount) and a PHP fixture (FrankenPHP, the same
 * way, with its libphp.so). The layers have pack's modes and owners and a history entry each, so
 * podman builds FROM the builder.
 * Needs podman, runc, skopeo, the run image and the reference lifecycle (scripts/tools/): in CI all
 * are there and a missing one fails; elsewhere the suite says what is missing and is skipped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { referenceLauncher, runImageLayout } from '../../lib/package/app-image.ts';
import * as tar from 'tar';
import { readLayout } from '../../lib/package/oci-layout.ts';
import { FIXTURES, freePort, have, rbp, tmpDir } from '../helpers/rbp.ts';
import { describeNeeding, requirementOfAll } from '../helpers/requirement.ts';
import { realTool } from '../helpers/tool-cache.ts';
import { body200, cleanupPodman, forgetImage, logs, lowerTmp, podman, podmanEnv, runDetached, stop } from './podman.ts';

const runImage = runImageLayout();
const launcher = referenceLauncher();
const missing = [
  ...(await Promise.all(['podman', 'runc', 'skopeo'].map(async (t) => ((await have(t)) ? [] : [`${t} (apt-get install ${t})`])))).flat(),
  ...(fs.existsSync(path.join(runImage, 'index.json')) ? [] : [`the run image at ${runImage} (scripts/tools/run-image.sh)`]),
  ...(fs.existsSync(launcher) ? [] : [`the reference lifecycle at ${path.dirname(launcher)} (scripts/tools/lifecycle.sh)`]),
];
const tools = requirementOfAll(missing, 'builder.test.ts');
const sws = realTool('RBP_TOOL_STATIC_WEB_SERVER', 'builder.test.ts (the static case)');
const frankenphp = realTool('RBP_TOOL_FRANKENPHP', 'builder.test.ts (the PHP case)');

let dir: string;
let builderOutput = '';
const RUN_NAME = 'localhost:5000/rbp-run:bookworm';
/** How OpenShift runs an image: a read-only root, a tmpfs /tmp, an arbitrary user of group 0. */
const RESTRICTED = ['--read-only', '--tmpfs', '/tmp', '--user', '12345:0'];
beforeAll(async () => {
  if (tools.skip) return;
  tools.value();
  dir = path.join(lowerTmp('rbp-builder-'), 'builder');
  const r = await rbp(['builder', '--out', dir]);
  expect(r.exitCode, r.all).toBe(0);
  builderOutput = r.stdout;
  // `podman run oci:DIR:builder` stores the builder image under a name made from its path.
  forgetImage(`localhost${dir}`);
}, 300_000);
afterAll(cleanupPodman);

/**
 * The platform's part: the app (owned by the build user), the layout repository holding the run
 * image where the lifecycle looks for it, a cache, the operator's build-config env; then creator.
 */
async function create(fixture: string, operatorEnv: Record<string, string>, mounts: string[]) {
  const work = lowerTmp('rbp-create-');
  const app = path.join(work, 'app');
  fs.cpSync(path.join(FIXTURES, fixture), app, { recursive: true });
  const repo = path.join(work, 'repo');
  // Where the lifecycle's layout mode looks for the run image the builder names.
  const runDest = path.join(repo, 'localhost:5000', 'rbp-run', 'bookworm');
  fs.mkdirSync(path.dirname(runDest), { recursive: true });
  // skopeo reads the `:` of localhost:5000 in an oci: path as the start of a tag: copy, then move.
  await execa('skopeo', ['copy', '-q', `oci:${dir}:run`, `oci:${path.join(work, 'run-layout')}`]);
  fs.renameSync(path.join(work, 'run-layout'), runDest);
  fs.mkdirSync(path.join(work, 'cache'));
  const bc = path.join(work, 'build-config', 'env');
  fs.mkdirSync(bc, { recursive: true });
  // This machine's CA trust (a proxy's CA) reaches the buildpacks as an operator setting would.
  const ca = process.env.NODE_EXTRA_CA_CERTS;
  const env = { ...operatorEnv, ...(ca ? { NODE_EXTRA_CA_CERTS: ca } : {}) };
  for (const [k, v] of Object.entries(env)) fs.writeFileSync(path.join(bc, k), v);
  await execa('chown', ['-R', '1000:1000', work]);
  const volumes = [
    ...['-v', `${app}:/workspace`, '-v', `${repo}:/layout-repo`, '-v', `${path.join(work, 'cache')}:/cache`, '-v', `${path.dirname(bc)}:/cnb/build-config:ro`],
    ...(ca ? ['-v', `${ca}:${ca}:ro`] : []),
    ...mounts,
  ];
  const r = await podman(
    [
      'run',
      '--rm',
      '--passwd=false',
      '--network',
      'host',
      ...volumes,
      '-e',
      'CNB_EXPERIMENTAL_MODE=warn',
      `oci:${dir}:builder`,
      '/cnb/lifecycle/creator',
      '-layout',
      '-layout-dir',
      '/layout-repo',
      '-run-image',
      RUN_NAME,
      '-cache-dir',
      '/cache',
      'app',
    ],
    { timeout: 600_000 },
  );
  return { exitCode: r.exitCode, all: r.all, image: path.join(repo, 'index.docker.io', 'library', 'app', 'latest') };
}

/**
 * Nothing needs a Node.js at launch, so no Node.js in the image (lib/launch/stored-plan.ts): the
 * buildpack's launch layers are the launcher and the server the operator gave (copied in), and what the app
 * adds to the run image besides that server stays small (it was 121 MB more with the launcher's own
 * Node.js).
 */
async function expectNoNodeInImage(image: string, buildpack: string, server: string): Promise<void> {
  const config = JSON.parse((await execa('skopeo', ['inspect', '--config', `oci:${image}`])).stdout) as {
    config: { Labels: Record<string, string> };
    rootfs: { diff_ids: string[] };
  };
  const md = JSON.parse(config.config.Labels['io.buildpacks.lifecycle.metadata']!) as {
    buildpacks: { key: string; layers?: Record<string, { sha: string }> }[];
  };
  const bpLayers = md.buildpacks.find((b) => b.key === buildpack)?.layers ?? {};
  expect(Object.keys(bpLayers)).toContain('launcher');
  expect(Object.keys(bpLayers)).toContain(server);
  expect(Object.keys(bpLayers)).not.toContain('launcher-node');
  // The manifests' layer sizes (compressed, as a registry stores them): the run image's come first.
  const sizes = async (ref: string) =>
    (JSON.parse((await execa('skopeo', ['inspect', '--raw', ref])).stdout) as { layers: { size: number }[] }).layers.map((l) => l.size);
  const [app, run] = [await sizes(`oci:${image}`), await sizes(`oci:${dir}:run`)];
  const serverAt = config.rootfs.diff_ids.indexOf(bpLayers[server]!.sha);
  const added = app.slice(run.length).reduce((n, x, i) => (i + run.length === serverAt ? n : n + x), 0);
  console.log(`${buildpack}: the app image adds ${(added / 1e6).toFixed(1)} MB to the run image, and ${(app[serverAt]! / 1e6).toFixed(1)} MB of server`);
  expect(added).toBeLessThan(20e6);
}

describeNeeding(tools, 'rbp builder --out DIR', () => {
  it('CI has everything the builder needs', () => {
    expect(missing).toEqual([]);
  });

  it('writes the builder image with the labels pack and kpack read, the run image, and builder.toml', async () => {
    const info = JSON.parse((await execa('skopeo', ['inspect', `oci:${dir}:builder`])).stdout) as { Labels: Record<string, string> };
    const md = JSON.parse(info.Labels['io.buildpacks.builder.metadata']!) as {
      buildpacks: { id: string }[];
      stack: { runImage: { image: string } };
      lifecycle: { version: string };
    };
    expect(md.buildpacks.map((b) => b.id)).toEqual(['rbp/node', 'rbp/static', 'rbp/phpserver']);
    expect(md.stack.runImage.image).toBe(RUN_NAME);
    expect(md.lifecycle.version).toBe('0.20.8');
    expect(JSON.parse(info.Labels['io.buildpacks.buildpack.order']!)).toEqual([
      { group: [{ id: 'rbp/node', version: expect.any(String) }] },
      { group: [{ id: 'rbp/static', version: expect.any(String) }] },
      { group: [{ id: 'rbp/phpserver', version: expect.any(String) }] },
    ]);
    expect(Object.keys(JSON.parse(info.Labels['io.buildpacks.buildpack.layers']!)).sort()).toEqual(['rbp/node', 'rbp/phpserver', 'rbp/static']);
    const config = JSON.parse((await execa('skopeo', ['inspect', '--config', `oci:${dir}:builder`])).stdout) as { config: { Env: string[]; User: string } };
    expect(config.config.User).toBe('1000:1000');
    expect(config.config.Env).toEqual(expect.arrayContaining(['CNB_USER_ID=1000', 'CNB_GROUP_ID=1000']));
    expect((await execa('skopeo', ['inspect', `oci:${dir}:run`])).exitCode).toBe(0);
    const toml = fs.readFileSync(path.join(dir, 'builder.toml'), 'utf8');
    expect(toml).toContain('uri = "buildpacks/rbp-node.cnb"');
    expect(toml).toContain('[lifecycle]\nuri = "lifecycle-v0.20.8+linux.x86-64.tgz"');
    expect(toml).toContain(`image = "${RUN_NAME}"`);
    for (const f of ['buildpacks/rbp-node.cnb', 'buildpacks/rbp-static.cnb', 'buildpacks/rbp-phpserver.cnb'])
      expect(fs.existsSync(path.join(dir, f)), f).toBe(true);
    // The lifecycle's release archive, as pack reads it: lifecycle.toml at the root, the programs one folder deep.
    const entries: string[] = [];
    await tar.t({ file: path.join(dir, 'lifecycle-v0.20.8+linux.x86-64.tgz'), onReadEntry: (e) => entries.push(e.path) });
    expect(entries).toEqual(
      expect.arrayContaining(['lifecycle.toml', 'lifecycle/lifecycle', 'lifecycle/launcher', 'lifecycle/creator', 'lifecycle/detector', 'lifecycle/exporter']),
    );
    // rbp builder says how to have the images where pack looks for them.
    expect(builderOutput).toContain(`skopeo copy oci:${dir}:run docker-daemon:${RUN_NAME}`);
    expect(builderOutput).toContain(`skopeo copy oci:${dir}:builder containers-storage:localhost:5000/rbp:bookworm`);
    expect(builderOutput).toContain(`skopeo copy oci:${dir}:build containers-storage:localhost:5000/rbp-build:bookworm`);
    // Every image of one family of media types: OCI's in the layout (the only one containers/image
    // reads from a layout); `--publish` pushes them with Docker's (pack.test.ts).
    for (const tag of ['builder', 'build', 'run', 'lifecycle']) {
      const m = JSON.parse((await execa('skopeo', ['inspect', '--raw', `oci:${dir}:${tag}`])).stdout) as { mediaType: string; layers: { mediaType: string }[] };
      expect([...new Set([m.mediaType, ...m.layers.map((l) => l.mediaType)])], tag).toEqual([
        'application/vnd.oci.image.manifest.v1+json',
        'application/vnd.oci.image.layer.v1.tar+gzip',
      ]);
    }
  });

  it("the lifecycle image: buildpacksio/lifecycle's labels and /cnb/lifecycle; the build image: the stack kpack reads", async () => {
    const lc = JSON.parse((await execa('skopeo', ['inspect', '--config', `oci:${dir}:lifecycle`])).stdout) as {
      config: { Labels: Record<string, string>; WorkingDir: string };
    };
    expect(lc.config.Labels['io.buildpacks.lifecycle.version']).toBe('0.20.8');
    expect(JSON.parse(lc.config.Labels['io.buildpacks.lifecycle.apis']!).platform.supported).toContain('0.13');
    expect(lc.config.WorkingDir).toBe('/layers');
    const build = JSON.parse((await execa('skopeo', ['inspect', '--config', `oci:${dir}:build`])).stdout) as {
      config: { Labels: Record<string, string>; Env: string[]; User: string };
    };
    const run = JSON.parse((await execa('skopeo', ['inspect', '--config', `oci:${dir}:run`])).stdout) as { config: { Labels: Record<string, string> } };
    expect(build.config.Labels['io.buildpacks.stack.id']).toBe('io.buildpacks.stacks.bookworm');
    expect(run.config.Labels['io.buildpacks.stack.id']).toBe(build.config.Labels['io.buildpacks.stack.id']);
    expect(build.config.Env).toEqual(expect.arrayContaining(['CNB_USER_ID=1000', 'CNB_GROUP_ID=1000']));
    expect(build.config.User).toBe('1000:1000');
  });

  it("every layer with pack's modes and owners, and one history entry per layer, in the four images", async () => {
    for (const tag of ['builder', 'build', 'run', 'lifecycle']) {
      const image = readLayout(dir, tag);
      const history = image.config.history ?? [];
      expect(
        history.filter((h) => !h.empty_layer),
        tag,
      ).toHaveLength(image.manifest.layers.length);
    }
    // The layers rbp adds (after the run image's own): folders 0755, files 0644 or 0755, root's, but
    // the CNB user's /layers, /workspace and home.
    const builder = readLayout(dir, 'builder');
    const base = readLayout(dir, 'run').manifest.layers.length;
    const bad: string[] = [];
    for (const file of builder.layerFiles.slice(base - 1)) {
      await tar.t({
        file,
        onReadEntry: (e) => {
          const p = e.path.replace(/\/$/, '');
          const user = ['layers', 'workspace', 'home/cnb'].includes(p);
          const owner = `${e.uid}:${e.gid}`;
          const mode = (e.mode ?? 0) & 0o7777;
          if (owner !== (user ? '1000:1000' : '0:0') && !(p.startsWith('etc/') || p === 'home')) bad.push(`${p} owned ${owner}`);
          if (e.type === 'Directory' && mode !== 0o755) bad.push(`${p} mode ${mode.toString(8)}`);
          if (e.type === 'File' && mode !== 0o644 && mode !== 0o755) bad.push(`${p} mode ${mode.toString(8)}`);
        },
      });
    }
    expect(bad).toEqual([]);
  });

  it('passwd and group hold the CNB user; podman builds FROM the builder (history matches the layers)', async () => {
    const builderName = `localhost/rbp-test-builder-${process.pid}:latest`;
    await execa('skopeo', ['copy', '-q', `oci:${dir}:builder`, `containers-storage:${builderName}`], { env: podmanEnv });
    forgetImage(builderName);
    const passwd = await podman([
      'run',
      '--rm',
      '--passwd=false',
      '--entrypoint',
      'sh',
      `oci:${dir}:builder`,
      '-c',
      'id && getent passwd 1000 && getent group 1000 && ls -ld /layers /workspace /cnb/buildpacks/rbp_node',
    ]);
    expect(passwd.exitCode, passwd.all).toBe(0);
    expect(passwd.stdout).toMatch(/^uid=1000\(cnb\) gid=1000\(cnb\)/);
    expect(passwd.stdout).toContain('cnb:x:1000:1000:CNB user:/home/cnb:/bin/sh');
    const ctx = tmpDir('rbp-from-builder-');
    fs.writeFileSync(path.join(ctx, 'Containerfile'), `FROM ${builderName}\nRUN echo extended > /tmp/extended\n`);
    const tag = `localhost/rbp-test-from-builder-${process.pid}`;
    const built = await podman(['build', '--pull=never', '-t', tag, '-f', path.join(ctx, 'Containerfile'), ctx]);
    forgetImage(tag);
    expect(built.exitCode, built.all).toBe(0);
  }, 300_000);

  it('the lifecycle in the builder builds a node app into an image podman runs read-only as any user: 200, clean stop', async () => {
    const r = await create('node-hello', {}, []);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('===> DETECTING');
    expect(r.all).toMatch(/rbp\/node\s+\S+/);
    const port = await freePort();
    const id = await runDetached(`oci:${r.image}`, [...RESTRICTED, '-e', `RBP_PUBLIC_PORT=${port}`]);
    const body = await body200(port);
    expect(body, await logs(id)).toContain('hello from node v24.15.0 (production)');
    expect(await stop(id)).toBe('0');
  }, 600_000);

  /**
   * An operator whose build and run images carry a server at /opt/<name> (the tool's cache folder,
   * its bin/ and lib/ as built, mounted read-only: the cache sits in root's home, which the build
   * user 1000 cannot enter) names it with its RBP_TOOL_* variable in the build-config env.
   */
  async function withOperatorServer(fixture: string, buildpack: string, variable: string, exe: string, optName: string, layer: string, expectBody: RegExp) {
    expect(exe, variable).toBeTruthy();
    const mount = ['-v', `${path.dirname(path.dirname(exe))}:/opt/${optName}:ro`];
    const r = await create(fixture, { [variable]: `/opt/${optName}/bin/${path.basename(exe)}` }, mount);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toMatch(new RegExp(`${buildpack.replace('/', '\\/')}\\s+\\S+`));
    expect(r.all).toContain(`copied ${variable}=/opt/${optName}/bin/${path.basename(exe)}`);
    await expectNoNodeInImage(r.image, buildpack, layer);
    // The image holds the server (copied into a launch layer): it runs with no mount.
    const port = await freePort();
    const id = await runDetached(`oci:${r.image}`, [...RESTRICTED, '-e', `RBP_PUBLIC_PORT=${port}`]);
    const body = await body200(port);
    expect(body, await logs(id)).toMatch(expectBody);
    expect(await stop(id)).toBe('0');
  }

  it.skipIf(sws.skip)(
    'and a static site served by the Static Web Server the operator gave, read-only as any user',
    async () => {
      await withOperatorServer('static-index-html', 'rbp/static', 'RBP_TOOL_STATIC_WEB_SERVER', sws.path(), 'sws', 'static-web-server', /<html/i);
    },
    600_000,
  );

  it.skipIf(frankenphp.skip)(
    'and a PHP app served by the FrankenPHP the operator gave (lib/libphp.so beside bin/), read-only as any user',
    async () => {
      await withOperatorServer(
        'php-index-php',
        'rbp/phpserver',
        'RBP_TOOL_FRANKENPHP',
        frankenphp.path(),
        'frankenphp',
        'frankenphp',
        /^hello from index\.php on PHP \d+\.\d+\.\d+$/m,
      );
    },
    600_000,
  );
});
