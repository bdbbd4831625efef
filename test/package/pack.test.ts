/**
 * Our builder with the real pack (scripts/tools/pack.sh, RBP_TEST_PACK) talking to podman's Docker
 * API (`podman system service` on a socket of this test's own, --docker-host=inherit) and a real
 * registry (docker-registry on a loopback port), as a platform user has them:
 *   - README's "Use with pack" commands, run as written (only the two settings lines, DOCKER_HOST
 *     and REGISTRY, are this test's): `rbp builder --publish`, `pack build --trust-builder
 *     --publish` (the creator) and `pack build --lifecycle-image` (untrusted: five phases, three of
 *     them in our lifecycle image), `pack builder create` from builder.toml;
 *   - the load commands `rbp builder --out` prints, then `pack builder create --pull-policy never`
 *     offline (no proxy reaches the internet: the lifecycle and the buildpacks are files beside
 *     builder.toml), then a PHP app built with that builder;
 *   - a static site built untrusted, its server given by the operator (--volume, --env RBP_TOOL_*);
 *   - as Kubernetes engines run the lifecycle (the builder pulled from the registry, one container
 *     per phase as 1000:1000, volumes only): Tekton's five phases, the creator with kpack's cache
 *     image; the SBOMs `pack sbom download` finds in those images and in rbp's own; then a patched
 *     run image pushed under the run image's name, the lifecycle's `rebaser` and `pack rebase`;
 * and every image started by podman with --passwd=false (as Docker and Kubernetes, which add no
 * /etc/passwd line for an unknown user) and no mounts answers 200 with the right body.
 * Needs pack, podman, runc, skopeo, docker-registry, the run image and the lifecycle: in CI all
 * are there and a missing one fails; elsewhere the suite says what is missing and is skipped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa, execaSync } from 'execa';
import { finished } from '../../lib/child-result.ts';
import { parse } from 'smol-toml';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { referenceLauncher, runImageLayout } from '../../lib/package/app-image.ts';
import { FIXTURES, freePort, have, RBP, rbp, ROOT, tmpDir } from '../helpers/rbp.ts';
import { body200, cleanupPodman, forgetImage, logs, podman, runDetached } from './podman.ts';
import { sbomErrors } from './sbom-schemas.ts';
import { remotePodman, startPodmanService, type PodmanService } from './podman-service.ts';
import { builderInstructions, builderNames } from '../../lib/package/builder.ts';
import { formatRef } from '../../lib/package/image-ref.ts';
import { registryMissing, startRegistry, type Registry } from './registry-server.ts';
import { describeNeeding, requirementOfAll } from '../helpers/requirement.ts';

const pack = process.env.RBP_TEST_PACK;
const sws = process.env.RBP_TOOL_STATIC_WEB_SERVER;
const frankenphp = process.env.RBP_TOOL_FRANKENPHP;
const missing = [
  ...(pack && fs.existsSync(pack) ? [] : ['pack (RBP_TEST_PACK, scripts/tools/pack.sh)']),
  ...(await Promise.all(['podman', 'runc', 'skopeo'].map(async (t) => ((await have(t)) ? [] : [`${t} (apt-get install ${t})`])))).flat(),
  ...(await registryMissing()),
  ...(fs.existsSync(path.join(runImageLayout(), 'index.json')) ? [] : [`the run image (scripts/tools/run-image.sh)`]),
  ...(fs.existsSync(referenceLauncher()) ? [] : [`the reference lifecycle (scripts/tools/lifecycle.sh)`]),
  ...(sws ? [] : ['RBP_TOOL_STATIC_WEB_SERVER (scripts/tools/static-web-server.sh)']),
  ...(frankenphp ? [] : ['RBP_TOOL_FRANKENPHP (scripts/tools/frankenphp.sh)']),
];
const tools = requirementOfAll(missing, 'pack.test.ts');

// Started before the tests when the tools are there (none when they are skipped, or fail to start).
let registry: Registry | undefined;
let svc: PodmanService | undefined;
let work: string;
/** Where README's commands run; its rbp-builder folder is the next test's too. */
let readmeDir: string;
/** The commands of README's "Use with pack", and its two settings lines. */
const README_BLOCK = /## Use with pack[\s\S]*?```sh\n([\s\S]*?)```/;

/** pack's cache volumes that were there before: the others are this test's, removed at the end. */
let volumesBefore = new Set<string>();
const volumes = async () => new Set((await execa('podman', ['volume', 'ls', '-q'])).stdout.split('\n').filter(Boolean));

beforeAll(async () => {
  if (tools.skip) return;
  tools.value();
  volumesBefore = await volumes();
  registry = await startRegistry();
  svc = await startPodmanService([registry.host]);
  work = tmpDir('rbp-pack-');
  readmeDir = tmpDir('rbp-readme-');
}, 60_000);

afterAll(async () => {
  // What pack pulled into podman's store (the builder, run and lifecycle images) and its cache volumes.
  // Every image named after this test's registry (its port is this test's own), untagged ones included.
  if (registry) {
    const listed = finished(await execa('podman', ['images', '--format', '{{.Repository}} {{.ID}}'], { reject: false }));
    for (const line of (listed.stdout ?? '').split('\n')) if (line.startsWith(`${registry.host}/`)) forgetImage(line.split(' ')[1]!);
  }
  await cleanupPodman();
  for (const v of await volumes().catch(() => new Set<string>()))
    if (!volumesBefore.has(v) && v.startsWith('pack-cache-')) await execa('podman', ['volume', 'rm', '-f', v], { reject: false });
  await svc?.stop();
  await registry?.stop();
});

/** PATH with pack and `rbp` (this checkout's dist/rbp.js), as a user who installed both has it. */
function userPath(): string {
  const bin = path.join(work, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  if (!fs.existsSync(path.join(bin, 'rbp'))) fs.symlinkSync(RBP, path.join(bin, 'rbp'));
  return `${bin}:${path.dirname(pack!)}:${process.env.PATH}`;
}

/** pack flags that give the build this machine's CA (NODE_EXTRA_CA_CERTS), when it has one. */
function trustFlags(): string[] {
  const ca = process.env.NODE_EXTRA_CA_CERTS;
  return ca ? ['--volume', `${ca}:/etc/ssl/certs/rbp-host-ca.crt:ro`, '--env', 'NODE_EXTRA_CA_CERTS=/etc/ssl/certs/rbp-host-ca.crt'] : [];
}

/** An image pack wrote (to the registry or podman's store) runs with no mount and no passwd line added. */
async function serves(image: string, body: RegExp, extra: string[] = []): Promise<string> {
  forgetImage(image);
  const port = await freePort();
  const id = await runDetached(image, [...(image.startsWith(registry!.host) ? ['--tls-verify=false'] : []), '-e', `RBP_PUBLIC_PORT=${port}`, ...extra]);
  const got = await body200(port);
  expect(got, await logs(id)).toMatch(body);
  return id;
}

describeNeeding(tools, 'pack with our builder, through podman’s Docker API', () => {
  it('CI has pack, podman, the registry and the tools', () => {
    expect(missing).toEqual([]);
  });

  it('README "Use with pack", as written: builder published, trusted and untrusted pack builds, pack builder create', async () => {
    const block = README_BLOCK.exec(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'))?.[1];
    expect(block, 'README.md has a "Use with pack" section with a sh block').toBeTruthy();
    // The user's own settings: this test's podman socket and registry, and this machine's CA (its
    // network intercepts TLS: the build's downloads need it, as a user behind such a proxy gives it).
    const settings = /^export DOCKER_HOST=.*\n^REGISTRY=.*\n^TRUST=\(\).*\n/m;
    expect(block).toMatch(settings);
    const script = `TRUST=(${trustFlags().join(' ')})\n${block!.replace(settings, '')}`;
    const cwd = readmeDir;
    fs.cpSync(path.join(FIXTURES, 'node-hello'), path.join(cwd, 'fixtures', 'node-hello'), { recursive: true });
    const r = await execa('bash', ['-euo', 'pipefail', '-c', script], {
      cwd,
      env: { ...svc!.env, REGISTRY: registry!.host, PATH: userPath(), NO_COLOR: '1' },
      reject: false,
      all: true,
      timeout: 900_000,
    });
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('===> DETECTING'); // the lifecycle's phases ran
    expect(r.all).toMatch(/Successfully built image '?.*hello/);
    forgetImage('hello');
    // Trusted, published: pulled from the registry. Untrusted, in podman's store.
    await serves(`${registry!.host}/hello`, /hello from node v24\.15\.0 \(production\)/);
    await serves('hello', /hello from node v24\.15\.0 \(production\)/);
    // pack builder create read our builder.toml: the builder it made runs the same lifecycle and order.
    const created = JSON.parse((await execa('skopeo', ['inspect', '--tls-verify=false', `docker://${registry!.host}/my-builder`])).stdout) as {
      Labels: Record<string, string>;
    };
    expect(JSON.parse(created.Labels['io.buildpacks.builder.metadata']!).lifecycle.version).toBe('0.20.8');
    expect(JSON.parse(created.Labels['io.buildpacks.buildpack.order']!).map((g: { group: { id: string }[] }) => g.group[0]!.id)).toEqual([
      'rbp/node',
      'rbp/static',
      'rbp/phpserver',
    ]);
  }, 900_000);

  it('the load commands rbp builder prints, then pack builder create offline with --pull-policy never; a PHP app built with it (FrankenPHP given by the operator) runs with no mount', async () => {
    // The folder README's `rbp builder --out rbp-builder --publish …` wrote.
    const layout = path.join(readmeDir, 'rbp-builder');
    expect(fs.existsSync(path.join(layout, 'builder.toml')), "README's commands ran first").toBe(true);
    // The lifecycle by uri, a file beside builder.toml: not by version, which pack downloads.
    const toml = parse(fs.readFileSync(path.join(layout, 'builder.toml'), 'utf8')) as { lifecycle: Record<string, string> };
    expect(toml.lifecycle).toEqual({ uri: 'lifecycle-v0.20.8+linux.x86-64.tgz' });
    expect(fs.existsSync(path.join(layout, toml.lifecycle.uri!))).toBe(true);
    // What `rbp builder --out` prints to load the images into podman, run as printed, with none of
    // them in the store before (the README's builds pulled some).
    const names = builderNames({ builder: `${registry!.host}/rbp:bookworm`, lifecycleVersion: '0.20.8' });
    for (const k of ['builder', 'build', 'run', 'lifecycle'] as const) await remotePodman(svc!, ['rmi', '-f', formatRef(names[k])]);
    const printed = builderInstructions(layout, names);
    const load = printed.slice(printed.indexOf('into podman:') + 1).map((l) => l.trim());
    expect(load).toHaveLength(4);
    for (const line of load) {
      const r = await execa('bash', ['-c', line], { env: svc!.env, reject: false, all: true });
      expect(r.exitCode, `${line}\n${r.all}`).toBe(0);
    }
    // Offline: any request that leaves this machine goes to a proxy that is not there.
    const offline = { HTTPS_PROXY: 'http://127.0.0.1:9', HTTP_PROXY: 'http://127.0.0.1:9', NO_PROXY: '127.0.0.1,localhost' };
    const builder = 'rbp-test-php-builder';
    forgetImage(builder);
    const create = await execa(pack!, ['builder', 'create', builder, '--config', path.join(layout, 'builder.toml'), '--pull-policy', 'never'], {
      env: { ...svc!.env, ...offline },
      reject: false,
      all: true,
    });
    expect(create.exitCode, create.all).toBe(0);
    expect(create.all).not.toMatch(/Downloading/i);

    const phpHome = path.dirname(path.dirname(frankenphp!));
    const r = await execa(
      pack!,
      [
        'build',
        'rbp-test-php',
        '--path',
        path.join(FIXTURES, 'php-index-php'),
        '--builder',
        builder,
        '--pull-policy',
        'never',
        '--trust-builder',
        '--docker-host=inherit',
        '--network',
        'host',
        '--volume',
        `${phpHome}:/opt/frankenphp:ro`,
        '--env',
        'RBP_TOOL_FRANKENPHP=/opt/frankenphp/bin/frankenphp',
        ...trustFlags(),
      ],
      { env: svc!.env, reject: false, all: true, timeout: 600_000 },
    );
    expect(r.exitCode, r.all).toBe(0);
    // Copied, or reused from the image of the same name an earlier run left in the store.
    expect(r.all).toMatch(
      /copied RBP_TOOL_FRANKENPHP=\/opt\/frankenphp\/bin\/frankenphp and \d+ libraries it loads \([^)]*\) into the launch layer frankenphp|reused the copy of RBP_TOOL_FRANKENPHP=\/opt\/frankenphp\/bin\/frankenphp in the image/,
    );
    await serves('rbp-test-php', /^hello from index\.php on PHP \d+\.\d+\.\d+$/m);
  }, 900_000);

  it('an untrusted build of a static site (analyze, restore, export in our lifecycle image), its server given by the operator, runs with no mount', async () => {
    const swsHome = path.dirname(path.dirname(sws!));
    const r = await execa(
      pack!,
      [
        'build',
        'rbp-test-static',
        '--path',
        path.join(FIXTURES, 'static-index-html'),
        '--builder',
        `${registry!.host}/rbp:bookworm`,
        '--lifecycle-image',
        `${registry!.host}/rbp-lifecycle:0.20.8`,
        '--docker-host=inherit',
        '--network',
        'host',
        '--volume',
        `${swsHome}:/opt/sws:ro`,
        '--env',
        'RBP_TOOL_STATIC_WEB_SERVER=/opt/sws/bin/static-web-server',
        ...trustFlags(),
      ],
      { env: svc!.env, reject: false, all: true, timeout: 600_000 },
    );
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('===> ANALYZING');
    expect(r.all).toContain('===> EXPORTING');
    expect(r.all).toMatch(/copied RBP_TOOL_STATIC_WEB_SERVER=\/opt\/sws\/bin\/static-web-server into the launch layer static-web-server/);
    await serves('rbp-test-static', /<html/i);
  }, 900_000);

  // Kubernetes engines: the lifecycle's phases in containers of the builder pulled from the registry.
  let appImages: { tekton: string; kpack: string } | undefined;

  it('Tekton-style phases (analyzer, detector, restorer, builder, exporter, each its own container as 1000:1000, volumes only, the operator tool as a volume and a platform env file): the image serves read-only as any user', async () => {
    const reg = registry!.host;
    const image = `${reg}/tekton-static`;
    const swsHome = path.dirname(path.dirname(sws!));
    const b = platformBuild('static-index-html', { RBP_TOOL_STATIC_WEB_SERVER: '/opt/sws/bin/static-web-server' }, ['-v', `${swsHome}:/opt/sws:ro`]);
    const phases: [string, string[]][] = [
      ['analyzer', ['-layers', '/layers', '-run-image', `${reg}/rbp-run:bookworm`, '-insecure-registry', reg, image]],
      ['detector', ['-app', '/workspace', '-layers', '/layers', '-platform', '/platform']],
      ['restorer', ['-layers', '/layers', '-cache-dir', '/cache']],
      ['builder', ['-app', '/workspace', '-layers', '/layers', '-platform', '/platform']],
      ['exporter', ['-app', '/workspace', '-layers', '/layers', '-cache-dir', '/cache', '-insecure-registry', reg, image]],
    ];
    for (const [name, args] of phases) {
      const r = await lifecycle(b.volumes, name, args);
      expect(r.exitCode, `${name}:\n${r.all}`).toBe(0);
      if (name === 'builder') expect(r.all).toContain('copied RBP_TOOL_STATIC_WEB_SERVER=/opt/sws/bin/static-web-server');
    }
    await serves(image, /<html/i, RESTRICTED);
    expect(await mediaTypes(image)).toEqual(DOCKER_ONLY);
    appImages = { tekton: image, kpack: '' };
  }, 900_000);

  it("the creator with kpack's cache image: the image carries its layers' SBOMs (CycloneDX and SPDX, valid) where pack sbom download finds them, as does rbp's own image", async () => {
    const reg = registry!.host;
    const image = `${reg}/kpack-node`;
    const b = platformBuild('node-hello', {}, []);
    const r = await lifecycle(b.volumes, 'creator', [
      ...['-app', '/workspace', '-layers', '/layers', '-platform', '/platform'],
      ...['-cache-image', `${reg}/kpack-node-cache`, '-run-image', `${reg}/rbp-run:bookworm`, '-insecure-registry', reg, image],
    ]);
    expect(r.exitCode, r.all).toBe(0);
    await serves(image, /hello from node v24\.15\.0 \(production\)/, RESTRICTED);
    appImages!.kpack = image;
    // rbp's own image of the same app, pushed beside it.
    const own = `${reg}/rbp-node`;
    const built = await rbp(['build', path.join(FIXTURES, 'node-hello'), '--out', path.join(tmpDir('rbp-sbom-'), 'out'), '--image', own, '--publish']);
    expect(built.exitCode, built.all).toBe(0);
    for (const ref of [image, own]) {
      const dir = tmpDir('rbp-sbom-download-');
      const dl = await execa(pack!, ['sbom', 'download', '--remote', ref, '--output-dir', dir], { env: svc!.env, reject: false, all: true });
      expect(dl.exitCode, dl.all).toBe(0);
      const launch = path.join(dir, 'layers', 'sbom', 'launch', 'rbp_node');
      for (const layer of ['node', 'npm', 'modules'])
        for (const format of ['cdx', 'spdx'] as const) {
          const file = path.join(launch, layer, `sbom.${format}.json`);
          expect(fs.existsSync(file), `${ref}: ${file}`).toBe(true);
          expect(sbomErrors(format, JSON.parse(fs.readFileSync(file, 'utf8'))), `${ref}: ${file}`).toEqual([]);
        }
      const nodeSbom = JSON.parse(fs.readFileSync(path.join(launch, 'node', 'sbom.cdx.json'), 'utf8')) as { components: object[] };
      expect(nodeSbom.components).toContainEqual(expect.objectContaining({ name: 'node', version: '24.15.0' }));
    }
  }, 900_000);

  it("a patched run image pushed under the run image's name: the lifecycle's rebaser (kpack's rebase) and pack rebase give images podman pulls and runs on the patched base", async () => {
    expect(appImages?.kpack, 'the builds above ran').toBeTruthy();
    const reg = registry!.host;
    const run = `${reg}/rbp-run:bookworm`;
    const ctx = tmpDir('rbp-patched-run-');
    fs.writeFileSync(path.join(ctx, 'Containerfile'), `FROM ${run}\nRUN echo patched > /etc/rbp-patched\n`);
    const built = await podman(['build', '--tls-verify=false', '--pull=always', '--format', 'docker', '-t', run, '-f', path.join(ctx, 'Containerfile'), ctx]);
    expect(built.exitCode, built.all).toBe(0);
    const pushed = await podman(['push', '--tls-verify=false', '--format', 'v2s2', run]);
    expect(pushed.exitCode, pushed.all).toBe(0);

    const rebased = await podman([
      'run',
      '--rm',
      '--passwd=false',
      '--network',
      'host',
      '--user',
      '1000:1000',
      '--tls-verify=false',
      `${reg}/rbp:bookworm`,
      '/cnb/lifecycle/rebaser',
      '-insecure-registry',
      reg,
      appImages!.tekton,
    ]);
    expect(rebased.exitCode, rebased.all).toBe(0);
    const packRebase = await execa(pack!, ['rebase', appImages!.kpack, '--publish'], { env: svc!.env, reject: false, all: true });
    expect(packRebase.exitCode, packRebase.all).toBe(0);
    for (const [image, body] of [
      [appImages!.tekton, /<html/i],
      [appImages!.kpack, /hello from node v24\.15\.0 \(production\)/],
    ] as const) {
      expect(await mediaTypes(image), image).toEqual(DOCKER_ONLY);
      const id = await serves(image, body, RESTRICTED);
      expect((await podman(['exec', id, 'cat', '/etc/rbp-patched'])).stdout, image).toBe('patched');
    }
  }, 900_000);
});

/** How OpenShift runs an image: a read-only root, a tmpfs /tmp, an arbitrary user of group 0. */
const RESTRICTED = ['--read-only', '--tmpfs', '/tmp', '--user', '12345:0', '--pull=always'];

/** The media types of an image's manifest and layers, each family once. */
async function mediaTypes(image: string): Promise<string[]> {
  const m = JSON.parse((await execa('skopeo', ['inspect', '--raw', '--tls-verify=false', `docker://${image}`])).stdout) as {
    mediaType: string;
    config: { mediaType: string };
    layers: { mediaType: string }[];
  };
  return [...new Set([m.mediaType, m.config.mediaType, ...m.layers.map((l) => l.mediaType)])];
}
const DOCKER_ONLY = [
  'application/vnd.docker.distribution.manifest.v2+json',
  'application/vnd.docker.container.image.v1+json',
  'application/vnd.docker.image.rootfs.diff.tar.gzip',
];

/**
 * The folders a Kubernetes build shares between its containers, as Tekton's buildpacks-phases task
 * makes them (a first root step gives them to the CNB user): the app, the layers, a volume cache and
 * the platform folder with one env file per variable; this machine's CA trust given the same way.
 */
function platformBuild(fixture: string, env: Record<string, string>, mounts: string[]): { volumes: string[] } {
  const work = tmpDir('rbp-k8s-');
  fs.cpSync(path.join(FIXTURES, fixture), path.join(work, 'workspace'), { recursive: true });
  for (const d of ['layers', 'cache', 'platform/env']) fs.mkdirSync(path.join(work, d), { recursive: true });
  const ca = process.env.NODE_EXTRA_CA_CERTS;
  for (const [k, v] of Object.entries({ ...env, ...(ca ? { NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/rbp-host-ca.crt' } : {}) }))
    fs.writeFileSync(path.join(work, 'platform', 'env', k), v);
  execaSync('chown', ['-R', '1000:1000', work]);
  const volumes = ['workspace', 'layers', 'cache', 'platform'].flatMap((d) => ['-v', `${path.join(work, d)}:/${d}`]);
  return { volumes: [...volumes, ...(ca ? ['-v', `${ca}:/etc/ssl/certs/rbp-host-ca.crt:ro`] : []), ...mounts] };
}

/** One phase of the lifecycle in its own container of the builder, as the CNB user, on the host network (the registry is on loopback). */
function lifecycle(volumes: string[], phase: string, args: string[]) {
  return podman(
    [
      'run',
      '--rm',
      '--passwd=false',
      '--network',
      'host',
      '--user',
      '1000:1000',
      '--tls-verify=false',
      ...volumes,
      `${registry!.host}/rbp:bookworm`,
      `/cnb/lifecycle/${phase}`,
      ...args,
    ],
    { timeout: 600_000 },
  );
}
