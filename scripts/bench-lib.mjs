// Shared by the benchmarks in scripts/bench/ (kept outside that folder: every file there is a suite).
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** A port nothing listens on right now. */
export function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Milliseconds from `t0` until GET / on the port answers 200 (polled every 5 ms). */
export async function untilOk(port, t0 = performance.now(), timeoutMs = 30_000) {
  for (;;) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/`);
      await r.arrayBuffer();
      if (r.status === 200) return performance.now() - t0;
    } catch {
      /* not listening yet */
    }
    if (performance.now() - t0 > timeoutMs) throw new Error(`port ${port} did not answer 200`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** `concurrency` keep-alive clients GET / for `ms`: requests per second and latency quantiles (ms). */
export async function load(port, { ms = 3000, concurrency = 8 } = {}) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies = [];
  const end = performance.now() + ms;
  const one = () =>
    new Promise((resolve, reject) => {
      const t0 = performance.now();
      http
        .get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(performance.now() - t0));
        })
        .on('error', reject);
    });
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) latencies.push(await one());
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  return { rps: latencies.length / elapsed, p50: q(0.5), p99: q(0.99) };
}

/** SIGTERM, resolved when the child has exited. */
export function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', resolve);
    child.kill('SIGTERM');
  });
}

/** Runs a command to its end; returns its wall time and stdout, or throws with its output. */
export function sh(cmd, args, opts = {}) {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 2 ** 20, ...opts });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
  return { ms, stdout: r.stdout };
}
