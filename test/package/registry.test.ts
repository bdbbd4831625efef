/**
 * Publishing to a real OCI registry (Debian's docker-registry, Distribution 2.8, started here on a
 * loopback port): `rbp package --publish` gives what a kpack ClusterStore reads (buildpackage images
 * whose io.buildpacks.buildpack.layers name real layers by diffID, with Buildpack APIs the lifecycle
 * supports); `rbp build --image REF --publish` pushes an app image and, warm, sends only what
 * changed; a registry that needs credentials takes them from $DOCKER_CONFIG/config.json as pack
 * does; one that refuses, or a missing login, is one clear error. (`rbp builder --publish` and
 * `pack build --publish` are in pack.test.ts, which needs the builder anyway.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LIFECYCLE_APIS } from '../../lib/package/lifecycle.ts';
import { referenceLauncher, runImageLayout } from '../../lib/package/app-image.ts';
import { FIXTURES, have, rbp, tmpDir } from '../helpers/rbp.ts';
import { dockerConfig, registryMissing, startRegistry, type Registry } from './registry-server.ts';
import { describeNeeding, requirementOfAll } from '../helpers/requirement.ts';

const missing = [...(await registryMissing()), ...((await have('skopeo')) ? [] : ['skopeo (apt-get install skopeo)'])];
const imageMissing = [
  ...(fs.existsSync(path.join(runImageLayout(), 'index.json')) ? [] : [`the run image at ${runImageLayout()} (scripts/tools/run-image.sh)`]),
  ...(fs.existsSync(referenceLauncher()) ? [] : [`the reference launcher at ${referenceLauncher()} (scripts/tools/lifecycle.sh)`]),
];
const registries = requirementOfAll(missing, 'registry.test.ts');
const imageParts = requirementOfAll(imageMissing, 'registry.test.ts (the app image case)');

const USER = { name: 'rbp', password: 'pushes-only-here' };
let open: Registry;
let withLogin: Registry;
let readOnly: Registry;
let broken: Registry;
beforeAll(async () => {
  if (registries.skip) return;
  registries.value();
  [open, withLogin, readOnly, broken] = await Promise.all([
    startRegistry(),
    startRegistry({ user: USER }),
    startRegistry({ readOnly: true }),
    startRegistry({ brokenStorage: true }),
  ]);
});
afterAll(async () => {
  await Promise.all([open, withLogin, readOnly, broken].filter(Boolean).map((r) => r.stop()));
});

const skopeo = async (args: string[]) =>
  JSON.parse((await execa('skopeo', [...args.slice(0, 1), '--tls-verify=false', ...args.slice(1)])).stdout) as Record<string, unknown>;

/** rbp's user-error block, with the port and folders made stable for a snapshot. */
function block(text: string, dirs: Record<string, string> = {}): string {
  let t = /! ERROR[\s\S]*?\(error id: [^)]*\)/.exec(text)?.[0] ?? text;
  for (const [from, to] of Object.entries(dirs)) t = t.replaceAll(from, to);
  return t.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>');
}

describeNeeding(registries, 'publishing to a registry', () => {
  it('CI has the registry and skopeo', () => {
    expect(missing).toEqual([]);
  });

  it('rbp package --publish: what a kpack ClusterStore reads, each layerDiffID a layer of its image', async () => {
    const ref = `${open.host}/rbp/buildpacks:0.1.0`;
    const r = await rbp(['package', '--publish', ref]);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stdout).toContain(
      `kpack ClusterStore sources: ${open.host}/rbp/buildpacks-node:0.1.0, ${open.host}/rbp/buildpacks-static:0.1.0, ${open.host}/rbp/buildpacks-phpserver:0.1.0, ${ref}`,
    );
    // The composite goes last: its layers are mounted from the three, not sent again.
    expect(r.stdout).toMatch(new RegExp(`pushed ${ref.replace(/[./]/g, '\\$&')} \\(sha256:[0-9a-f]{12}…\\): [12] of 5 blobs sent`));
    for (const [name, ids] of [
      ['buildpacks', ['rbp/auto', 'rbp/node', 'rbp/phpserver', 'rbp/static']],
      ['buildpacks-node', ['rbp/node']],
    ] as const) {
      const image = `docker://${open.host}/rbp/${name}:0.1.0`;
      const config = (await skopeo(['inspect', '--config', image])) as { rootfs: { diff_ids: string[] }; config: { Labels: Record<string, string> } };
      const layers = JSON.parse(config.config.Labels['io.buildpacks.buildpack.layers']!) as Record<
        string,
        Record<string, { api: string; layerDiffID: string }>
      >;
      expect(Object.keys(layers).sort()).toEqual([...ids]);
      for (const versions of Object.values(layers)) {
        for (const info of Object.values(versions)) {
          expect(config.rootfs.diff_ids).toContain(info.layerDiffID);
          expect(LIFECYCLE_APIS.buildpack.supported).toContain(info.api);
        }
      }
    }
  }, 120_000);

  it('a registry that needs credentials: refused without them, one clear error; pushed with ~/.docker/config.json', async () => {
    const ref = `${withLogin.host}/team/buildpacks:1`;
    const noLogin = tmpDir('rbp-no-login-');
    const refused = await rbp(['package', '--publish', ref], { env: { DOCKER_CONFIG: noLogin } });
    expect(refused.exitCode).toBe(2);
    expect(refused.all).not.toMatch(/\n\s+at /);
    expect(block(refused.all, { [noLogin]: '<DOCKER_CONFIG>' })).toMatchSnapshot();
    const login = dockerConfig(withLogin.host, USER);
    const wrong = dockerConfig(withLogin.host, { ...USER, password: 'wrong' });
    const denied = await rbp(['package', '--publish', ref], { env: { DOCKER_CONFIG: wrong } });
    expect(denied.exitCode).toBe(2);
    expect(denied.all).toContain('(error id: platform/registry/unauthorized)');
    expect(denied.all).toContain(`the credentials of auths in ${wrong}/config.json were refused`);
    expect(denied.all).not.toContain('wrong');
    const r = await rbp(['package', '--publish', ref], { env: { DOCKER_CONFIG: login } });
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).not.toContain(USER.password);
    const info = (await execa('skopeo', ['inspect', '--tls-verify=false', '--creds', `${USER.name}:${USER.password}`, `docker://${ref}`])).stdout;
    expect(JSON.parse(info).Labels['io.buildpacks.buildpackage.metadata']).toContain('rbp/auto');
  }, 120_000);

  it('a registry that refuses pushes (read-only): one clear error', async () => {
    const r = await rbp(['package', '--publish', `${readOnly.host}/rbp/buildpacks:1`]);
    expect(r.exitCode).toBe(2);
    expect(r.all).not.toMatch(/\n\s+at /);
    expect(block(r.all)).toMatchSnapshot();
  }, 60_000);

  it('a registry that fails (its storage is broken): one clear error', async () => {
    const r = await rbp(['package', '--publish', `${broken.host}/rbp/buildpacks:1`]);
    expect(r.exitCode).toBe(2);
    expect(r.all).not.toMatch(/\n\s+at /);
    expect(block(r.all).replace(/sha256:[0-9a-f]{12}…/, 'sha256:<digest>…')).toMatchSnapshot();
  }, 60_000);

  it.skipIf(imageParts.skip)(
    'rbp build --image REF --publish: pushed, and a warm rebuild sends only what changed; a refusal leaves OUT as it was',
    async () => {
      imageParts.value();
      const ref = `${open.host}/apps/hello:1`;
      const out = path.join(tmpDir('rbp-publish-'), 'out');
      const cold = await rbp(['build', path.join(FIXTURES, 'node-hello'), '--out', out, '--image', ref, '--publish']);
      expect(cold.exitCode, cold.all).toBe(0);
      const pushed = /pushed \S+ \((sha256:[0-9a-f]{12})…\): (\d+) of (\d+) blobs sent/.exec(cold.stdout);
      expect(pushed, cold.stdout).toBeTruthy();
      const inspected = (await skopeo(['inspect', `docker://${ref}`])) as { Digest: string; Labels: Record<string, string> };
      expect(inspected.Digest.startsWith(pushed![1]!)).toBe(true);
      expect(JSON.parse(inspected.Labels['io.buildpacks.build.metadata']!).processes[0].type).toBe('web');

      const warm = await rbp(['build', path.join(FIXTURES, 'node-hello'), '--out', out, '--image', ref, '--publish']);
      expect(warm.exitCode, warm.all).toBe(0);
      const again = /pushed \S+ \((sha256:[0-9a-f]{12})…\): (\d+) of (\d+) blobs sent/.exec(warm.stdout)!;
      // The same input gives the same image: nothing new to send.
      expect(again[1]).toBe(pushed![1]);
      expect(again[2]).toBe('0');

      const before = fs.readFileSync(path.join(out, 'rbp.toml'), 'utf8');
      const refusedPush = await rbp([
        'build',
        path.join(FIXTURES, 'node-hello'),
        '--out',
        out,
        '--image',
        `${readOnly.host}/apps/hello:1`,
        '--publish',
        '--env',
        'CHANGED=1',
      ]);
      expect(refusedPush.exitCode).toBe(62);
      expect(refusedPush.all).toContain('(error id: platform/registry/denied)');
      expect(refusedPush.all).toContain(`The previous build in ${out} is unchanged.`);
      expect(fs.readFileSync(path.join(out, 'rbp.toml'), 'utf8')).toBe(before);
    },
    300_000,
  );
});
