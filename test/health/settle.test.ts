/**
 * The deployment health check and a server that is still starting: a connection reset before any
 * HTTP answer is tried again (seen with FrankenPHP just after it listens); an HTTP status is final.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { healthCheck } from '../../lib/platform/health.ts';

let server: http.Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

/** A real HTTP server that resets the first `resets` connections, then answers `status`. */
function flaky(resets: number, status: number): Promise<number> {
  let seen = 0;
  server = http.createServer((_req, res) => res.writeHead(status).end('ok'));
  server.on('connection', (socket) => {
    if (seen++ < resets) socket.destroy();
  });
  return new Promise((r) => server!.listen(0, '127.0.0.1', () => r((server!.address() as AddressInfo).port)));
}

describe('health check of a server still starting', () => {
  it('a reset before any answer is tried again: the path answers 200', async () => {
    const r = await healthCheck(await flaky(2, 200), ['/']);
    expect(r.lines).toEqual(['Response from GET / is 200']);
    expect(r.ok).toBe(true);
  });

  it('a server that keeps resetting is reported unreachable after the retries', async () => {
    const r = await healthCheck(await flaky(100, 200), ['/']);
    expect(r.ok).toBe(false);
    expect(r.lines[0]).toMatch(/^Response from GET \/ is unreachable \(ECONNRESET\)$/);
  });

  it('an HTTP status is final at once, 404 included', async () => {
    const r = await healthCheck(await flaky(0, 404), ['/missing']);
    expect(r.lines.slice(0, 2)).toEqual(['Response from GET /missing is 404', 'Health check failed:']);
  });
});
