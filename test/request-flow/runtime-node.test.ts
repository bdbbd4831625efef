// The request flow around a real runtime: the node buildpack (rbp/node) serving fixtures/node-hello,
// behind Varnish and the custom middleware written for these tests.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { describeNeeding, varnishdRequirement } from '../helpers/requirement.ts';
import { copyFixture, FIXTURES, freePort, rbp, tmpDir } from '../helpers/rbp.ts';
import { dryRun, envArgs, get, startRun, waitHttp, waitOutput } from './helpers.ts';

const varnishd = varnishdRequirement('the node runtime request-flow test');

const trust: Record<string, string> = process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {};
// CC_CACHE_FILE names a file of the app (a path outside it is refused): node-hello plus the VCL.
const APP = copyFixture('node-hello');
fs.copyFileSync(path.join(FIXTURES, 'flow-app-cache', '.rbp', 'cache.vcl'), path.join(APP, 'flow-cache.vcl'));
const FLOW = {
  CC_CACHE_FILE: 'flow-cache.vcl',
  CC_REQUEST_FLOW: 'custom,cache',
  CC_REQUEST_FLOW_CUSTOM: `node ${path.join(FIXTURES, 'flow-app', 'middleware.mjs')} custom @@LISTEN_PORT@@ @@FORWARD_PORT@@`,
};

describeNeeding(varnishd, 'node runtime behind custom → cache', () => {
  let out = '';
  beforeAll(async () => {
    out = path.join(tmpDir('rbp-flow-node-'), 'out');
    const r = await rbp(['build', APP, '--out', out, '--type', 'node', ...envArgs({ ...trust, ...FLOW })]);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('Request flow: public port → custom → cache → app');
  }, 300_000);

  it('dry run: the node runtime’s app on 9000, the chain from the public port', async () => {
    const d = await dryRun(out, 18124, FLOW);
    expect(d.result.exitCode, d.result.all).toBe(0);
    expect(d.launch!.env.PORT).toBe('9000');
    expect(d.launch!.processes.map((p: { name: string; listen: number }) => [p.name, p.listen])).toEqual([
      ['custom', 18124],
      ['cache', expect.any(Number)],
      ['app', 9000],
    ]);
  });

  it('serves through the chain; the second request comes from the cache', async () => {
    const [port, appPort] = [await freePort(), await freePort()];
    const run = startRun(out, port, FLOW, { RBP_APP_PORT: String(appPort) });
    try {
      const r1 = await waitHttp(port, run, '/', 60_000);
      expect(await r1.text()).toMatch(/^hello from node v24\.15\.0 \(production\)/);
      const r2 = await get(port);
      expect([r1, r2].map((r) => r.headers.get('x-cache'))).toEqual(['MISS', 'HIT']);
      expect([r1, r2].map((r) => r.headers.get('x-custom-count'))).toEqual(['1', '2']);
      await waitOutput(run, `request flow ready: :${port} → custom → cache → app :${appPort}`);
    } finally {
      expect(await run.stop()).toBe(0);
    }
  });
});
