// App image benchmark: a warm `rbp build APP --out OUT --image DIR` (every layer reused) against a
// warm `pack build` of the same app with our builder, measured in the same run. Goal: ≤ 0.1×.
// pack (RBP_TEST_PACK) talks to a podman API socket of this run's own (ended by its pid); our builder
// and run image are copied into podman's store under their default names, and pack does not pull.
// Everything made here (images, pack's cache volumes) is removed by name at the end.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { median, root, sh } from '../bench-lib.mjs';

const rbp = path.join(root, 'dist', 'rbp.js');
const fixture = path.join(root, 'fixtures', 'node-hello');
const GOAL = 0.1;
const BUILDER = 'localhost:5000/rbp:bookworm';
const RUN = 'localhost:5000/rbp-run:bookworm';

async function podmanService(dir) {
  const sock = path.join(dir, 'podman.sock');
  const conf = path.join(dir, 'containers.conf');
  fs.writeFileSync(conf, '[containers]\ndefault_ulimits = []\n');
  const env = { ...process.env, CONTAINERS_CONF: conf };
  const child = spawn('podman', ['--runtime', 'runc', 'system', 'service', '--time=0', `unix://${sock}`], { env, stdio: 'ignore' });
  for (let i = 0; !fs.existsSync(sock); i++) {
    if (i > 150) throw new Error('podman system service did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  return { env: { ...env, DOCKER_HOST: `unix://${sock}`, PACK_HOME: path.join(dir, 'pack-home'), PACK_VOLUME_KEY: 'rbp-bench' }, stop: () => child.kill('SIGTERM') };
}

export async function run({ rounds = 3 } = {}) {
  const pack = process.env.RBP_TEST_PACK;
  if (!pack || !fs.existsSync(pack)) throw new Error('needs pack: RBP_TEST_PACK (eval "$(scripts/tools/env.sh)")');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-bench-image-'));
  const svc = await podmanService(work);
  const app = `rbp-bench-image-${process.pid}`;
  const volumesBefore = new Set(sh('podman', ['volume', 'ls', '-q']).stdout.split('\n').filter(Boolean));
  const rbpMs = [];
  const packMs = [];
  const rbpDigests = new Set();
  try {
    const layout = path.join(work, 'builder');
    sh('node', [rbp, 'builder', '--out', layout]);
    for (const [tag, name] of [['builder', BUILDER], ['run', RUN]]) sh('skopeo', ['copy', '-q', `oci:${layout}:${tag}`, `containers-storage:${name}`]);
    // Behind a proxy that intercepts TLS, the build needs this machine's CA for its downloads.
    const ca = process.env.NODE_EXTRA_CA_CERTS;
    const trust = ca ? ['--volume', `${ca}:/etc/ssl/certs/rbp-host-ca.crt:ro`, '--env', 'NODE_EXTRA_CA_CERTS=/etc/ssl/certs/rbp-host-ca.crt'] : [];
    const packBuild = () =>
      sh(pack, ['build', app, '--path', fixture, '--builder', BUILDER, '--trust-builder', '--pull-policy', 'never', '--docker-host=inherit', '--network', 'host', ...trust], { env: svc.env });
    const out = path.join(work, 'out');
    const image = path.join(work, 'image');
    const rbpBuild = () => {
      const r = sh('node', [rbp, 'build', fixture, '--out', out, '--image', image], { env: { ...process.env, NO_COLOR: '1' } });
      const m = /app image: .*?(sha256:[0-9a-f]{12})….*; (\d+) written, (\d+) unchanged/.exec(r.stdout);
      if (!m) throw new Error(`no app image line:\n${r.stdout}`);
      return { ms: r.ms, digest: m[1], written: Number(m[2]) };
    };
    // Cold once each: fills pack's cache volumes and rbp's cache and previous image.
    packBuild();
    rbpDigests.add(rbpBuild().digest);
    for (let i = 0; i < rounds; i++) {
      // Alternate which goes first, so neither always meets the page cache the other warmed.
      for (const which of i % 2 === 0 ? ['pack', 'rbp'] : ['rbp', 'pack']) {
        if (which === 'pack') packMs.push(packBuild().ms);
        else {
          const r = rbpBuild();
          if (r.written !== 0) throw new Error(`a warm rbp build --image wrote ${r.written} layers again`);
          rbpDigests.add(r.digest);
          rbpMs.push(r.ms);
        }
      }
    }
  } finally {
    spawnSync('podman', ['rmi', '-f', app, BUILDER, RUN], { stdio: 'ignore' });
    for (const v of sh('podman', ['volume', 'ls', '-q']).stdout.split('\n').filter(Boolean)) if (!volumesBefore.has(v) && v.startsWith('pack-cache-')) spawnSync('podman', ['volume', 'rm', '-f', v], { stdio: 'ignore' });
    svc.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
  const r = median(rbpMs);
  const p = median(packMs);
  return {
    fixture: 'fixtures/node-hello (Node.js 24.15.0 from the npm registry: a 140 MB image)',
    rounds,
    'warm pack build --trust-builder, our builder, podman API (s, median)': p / 1000,
    'warm rbp build --image DIR (s, median)': r / 1000,
    [`warm rbp build --image / warm pack build (goal ≤ ${GOAL})`]: r / p,
    'goal met': r / p <= GOAL,
    'rbp image digests over all builds (same input, same image)': rbpDigests.size,
    'all rounds (ms)': { pack: packMs.map(Math.round), rbp: rbpMs.map(Math.round) },
  };
}
