/**
 * The deployment health check (contract, "Deployment health check" and "Errors"): every configured
 * path must answer 200; each answer is logged, then a summary of the failing paths only.
 */
import http from 'node:http';
import net from 'node:net';
export { healthCheckPaths } from '../launch/health-check.ts';

/** Resolves when something accepts connections on the port, rejects when `alive()` says the app died or time runs out. */
export async function waitForPort(port: number, opts: { timeoutMs: number; alive: () => boolean; host?: string }): Promise<void> {
  const start = Date.now();
  const deadline = start + opts.timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const s = net.connect({ port, host: opts.host ?? '127.0.0.1' });
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (open) return;
    if (!opts.alive()) throw new Error('the application exited before it listened on its port');
    if (Date.now() > deadline) throw new Error(`nothing listened on port ${port} within ${Math.round(opts.timeoutMs / 1000)}s`);
    // A loopback connect costs little: poll closely while an app typically starts (a deploy waits no
    // longer than needed), then every 100 ms.
    await new Promise((r) => setTimeout(r, Date.now() - start < 5000 ? 10 : 100));
  }
}

export function get(port: number, p: string, timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: p, timeout: timeoutMs, headers: { 'user-agent': 'rbp-health-check' } }, (res) => {
      res.resume();
      resolve(String(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve(`unreachable (${(e as NodeJS.ErrnoException).code ?? e.message})`));
  });
}

export interface HealthResult {
  ok: boolean;
  results: { path: string; status: string }[];
  lines: string[];
}

/**
 * A server that has just begun to listen may reset the first connections while it finishes starting
 * (seen with FrankenPHP): no HTTP answer is retried a few times, a quarter second apart. Any HTTP
 * status, 404 and 500 included, is final at once.
 */
async function settledGet(port: number, p: string, attempts = 5): Promise<string> {
  for (let i = 1; ; i++) {
    const status = await get(port, p);
    if (!status.startsWith('unreachable') || i >= attempts) return status;
    await new Promise((r) => setTimeout(r, 250));
  }
}

export async function healthCheck(port: number, paths: string[]): Promise<HealthResult> {
  const results = [];
  for (const p of paths) results.push({ path: p, status: await settledGet(port, p) });
  const lines = results.map((r) => `Response from GET ${r.path} is ${r.status}`);
  const failing = results.filter((r) => r.status !== '200');
  if (failing.length) {
    lines.push('Health check failed:');
    for (const f of failing) lines.push(`- GET ${f.path} returned ${f.status}.`);
    lines.push('If the deployment fails after this message, please update your configuration and redeploy.');
  }
  return { ok: failing.length === 0, results, lines };
}
