/**
 * Our builder with the real pack (scripts/tools/pack.sh, RBP_TEST_PACK) talking to podman's Docker
 * API (`podman system service` on a socket of this test's own, --docker-host=inherit) and a real
 * registry (docker-registry on a loopback port), as a platform user has them:
 *   - README's "Use with pack" commands, run as written (only the two settings lines, DOCKER_HOST
 *     and REGISTRY, are this test's): `rbp builder --publish`, `pack build --trust-builder
 *     --publish` (the creator) and `pack build --lifecycle-image` (untrusted: five phases, three of
 *     them in our lifecycle image), `pack builder create` from builder.toml;
 *   - `pack builder create` offline (no proxy reaches the internet: the lifecycle and the buildpacks
 *     are files beside builder.toml), then a PHP app built with that builder;
 *   - a static site built untrusted, its server given by the operator (--volume, --env RBP_TOOL_*);
 * and every image started by podman with --passwd=false (as Docker and Kubernetes, which add no
 * /etc/passwd line for an unknown user) and no mounts answers 200 with the right body.
 * Needs pack, podman, runc, skopeo, docker-registry, the run image and the lifecycle: in CI all
 * are there and a missing one fails; elsewhere the suite says what is missing and is skipped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { finished } from '../../lib/child-result.ts';
import { parse } from 'smol-toml';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { referenceLauncher, runImageLayout } from '../../lib/package/app-image.ts';
import { FIXTURES, freePort, have, RBP, ROOT, tmpDir } from '../helpers/rbp.ts';
import { body200, cleanupPodman, forgetImage, logs, runDetached } from './podman.ts';
import { startPodmanService, type PodmanService } from './podman-service.ts';
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
async function serves(image: string, body: RegExp, extra: string[] = []): Promise<void> {
  forgetImage(image);
  const port = await freePort();
  const id = await runDetached(image, [...(image.startsWith(registry!.host) ? ['--tls-verify=false'] : []), '-e', `RBP_PUBLIC_PORT=${port}`, ...extra]);
  const got = await body200(port);
  expect(got, await logs(id)).toMatch(body);
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

  it('pack builder create offline from builder.toml; a PHP app built with it (FrankenPHP given by the operator) runs with no mount', async () => {
    // The folder README's `rbp builder --out rbp-builder --publish …` wrote.
    const layout = path.join(readmeDir, 'rbp-builder');
    expect(fs.existsSync(path.join(layout, 'builder.toml')), "README's commands ran first").toBe(true);
    // The lifecycle by uri, a file beside builder.toml: not by version, which pack downloads.
    const toml = parse(fs.readFileSync(path.join(layout, 'builder.toml'), 'utf8')) as { lifecycle: Record<string, string> };
    expect(toml.lifecycle).toEqual({ uri: 'lifecycle-v0.20.8+linux.x86-64.tgz' });
    expect(fs.existsSync(path.join(layout, toml.lifecycle.uri!))).toBe(true);
    // Offline: any request that leaves this machine goes to a proxy that is not there.
    const offline = { HTTPS_PROXY: 'http://127.0.0.1:9', HTTP_PROXY: 'http://127.0.0.1:9', NO_PROXY: '127.0.0.1,localhost' };
    const builder = `${registry!.host}/php-builder`;
    const create = await execa(pack!, ['builder', 'create', builder, '--config', path.join(layout, 'builder.toml'), '--publish'], {
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
});
