// The cache proxy for real: Debian's Varnish in front of a real app, built and run with rbp.
import { beforeAll, expect, it } from 'vitest';
import path from 'node:path';
import { describeNeeding, varnishdRequirement } from '../helpers/requirement.ts';
import { FIXTURES, freePort, rbp } from '../helpers/rbp.ts';
import { buildFlowApp, envArgs, flowBuildpack, get, startRun, waitHttp, waitOutput } from './helpers.ts';

const varnishd = varnishdRequirement('the cache proxy tests');

const CUSTOM = { CC_REQUEST_FLOW_CUSTOM: 'node middleware.mjs custom @@LISTEN_PORT@@ @@FORWARD_PORT@@' };

describeNeeding(varnishd, 'cache proxy (Varnish)', () => {
  let out = '';
  beforeAll(async () => {
    const b = await buildFlowApp('flow-app-cache');
    expect(b.result.exitCode, b.result.all).toBe(0);
    expect(b.result.all).toMatch(/Checking the cache configuration \.rbp\/cache\.vcl with varnishd -C\n {2}- valid/);
    out = b.out;
  });

  it('caches a real app: the second request is answered from the cache', async () => {
    const [port, appPort] = [await freePort(), await freePort()];
    const run = startRun(out, port, {}, { RBP_APP_PORT: String(appPort) });
    try {
      const first = await waitHttp(port, run);
      expect(first.headers.get('x-cache')).toBe('MISS');
      expect(await first.text()).toBe('hello from flow-app, request 1\n');
      const second = await get(port);
      expect(second.headers.get('x-cache')).toBe('HIT');
      expect(await second.text()).toBe('hello from flow-app, request 1\n');
      // The app itself saw one request, on its own port.
      const direct = await get(appPort);
      expect(direct.headers.get('x-app-count')).toBe('2');
      await waitOutput(run, `request flow ready: :${port} → cache → app :${appPort}`);
    } finally {
      expect(await run.stop()).toBe(0);
    }
  });

  it.each([
    ['cache,custom', 'the cache in front: the custom middleware sees only the miss', ['1', '1'], ['MISS', 'HIT']],
    ['custom,cache', 'the custom middleware in front: it sees both requests', ['1', '2'], ['MISS', 'HIT']],
  ])('CC_REQUEST_FLOW=%s: %s', async (flow, _why, customCounts, cache) => {
    const [port, appPort] = [await freePort(), await freePort()];
    const run = startRun(out, port, { CC_REQUEST_FLOW: flow, ...CUSTOM }, { RBP_APP_PORT: String(appPort) });
    try {
      const r1 = await waitHttp(port, run);
      const r2 = await get(port);
      expect([r1, r2].map((r) => r.headers.get('x-custom-count'))).toEqual(customCounts);
      expect([r1, r2].map((r) => r.headers.get('x-cache'))).toEqual(cache);
      expect(r2.headers.get('x-seen-flow-path')).toBe('custom');
      await waitOutput(run, `request flow ready: :${port} → ${flow.replace(',', ' → ')} → app :${appPort}`);
    } finally {
      await run.stop();
    }
  });

  it('the deployment health check goes through the whole chain', async () => {
    const bp = await flowBuildpack();
    const port = await freePort();
    const r = await rbp(
      [
        'deploy',
        path.join(FIXTURES, 'flow-app-cache'),
        '--out',
        path.join(path.dirname(out), 'deployed'),
        '--buildpack',
        bp,
        '--port',
        String(port),
        '--check',
        ...envArgs({ CC_REQUEST_FLOW: 'custom', ...CUSTOM }),
      ],
      { env: { RBP_APP_PORT: String(await freePort()) } },
    );
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('Response from GET / is 200');
    // Started inside-out: the app, the cache, then the custom middleware on the public port.
    expect(r.all).toMatch(new RegExp(`starting app on port \\d+[\\s\\S]*starting cache proxy[\\s\\S]*starting custom middleware on port ${port}:`));
  });
});

describeNeeding(varnishd, 'a broken VCL', () => {
  it('fails the build with Varnish’s compiler message', async () => {
    const b = await buildFlowApp('flow-app-badvcl');
    expect(b.result.exitCode).not.toBe(0);
    expect(b.result.all).toContain('! ERROR Varnish rejects the cache configuration');
    expect(b.result.all).toContain("Expected ';' got '}'");
    expect(b.result.all).toContain('(error id: request-flow/cache/vcl)');
  });
  it('named by CC_CACHE_FILE, checked the same way', async () => {
    const b = await buildFlowApp('flow-app-badvcl', { env: { CC_CACHE_FILE: '.rbp/cache.vcl' } });
    expect(b.result.exitCode).not.toBe(0);
    expect(b.result.all).toContain('! Seen: CC_CACHE_FILE: ".rbp/cache.vcl"');
  });
});
