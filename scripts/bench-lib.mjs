// Shared by the benchmarks in scripts/bench/ (kept outside that folder: every file there is a suite).
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root. */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** A port nothing listens on right now: `port` when it is free (else undefined), any with 0. */
export function freePort(port = 0) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(undefined));
    s.listen(port, '127.0.0.1', () => {
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

/** Runs a command to its end; returns its wall time and stdout, or throws with its output. */
export function sh(cmd, args, opts = {}) {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 2 ** 20, ...opts });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
  return { ms, stdout: r.stdout };
}
