import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Layers } from '../cnb/layers.ts';
import { readToml } from '../cnb/toml.ts';
import type { DependencySpec } from './catalog.ts';
import { installTool, type InstallToolOptions } from './install.ts';
import { captureLog, makeArchive, run, startServer, tempDir, type Artifact, type TestServer } from '../../test/helpers/deps.ts';
import { rejectedUserError as userError, stableRendering } from '../../test/helpers/user-error.ts';

let root: string;
let layersDir: string;
let artifacts: string;
let server: TestServer;
let cap: ReturnType<typeof captureLog>;

beforeEach(async () => {
  root = tempDir();
  layersDir = path.join(root, 'layers');
  artifacts = path.join(root, 'artifacts');
  fs.mkdirSync(artifacts);
  server = await startServer();
  cap = captureLog();
});

afterEach(async () => {
  await server.close();
  fs.rmSync(root, { recursive: true, force: true });
});

/** A tar.gz holding tool-<v>/bin/tool, served at /dl/<file>. */
async function published(version = '1.0.0', opts: Parameters<typeof makeArchive>[1] = { version }): Promise<Artifact & { url: string; urlPath: string }> {
  const a = await makeArchive(artifacts, { top: `tool-${version}`, binPath: 'bin/tool', ...opts, version });
  const urlPath = `/dl/${path.basename(a.file)}`;
  server.file(urlPath, a.file);
  return { ...a, url: `${server.url}${urlPath}`, urlPath };
}

function specFor(a: { url: string; sha256?: string }, version = '1.0.0', extra: Partial<DependencySpec> = {}): DependencySpec {
  return {
    id: 'tool',
    version,
    uri: a.url,
    ...(a.sha256 ? { checksum: { algorithm: 'sha256', hex: a.sha256, source: 'buildpack.toml' } } : {}),
    arch: 'amd64',
    stripComponents: 1,
    archive: 'tar.gz',
    bin: 'bin/tool',
    ...extra,
  };
}

function install(spec: DependencySpec, extra: Partial<InstallToolOptions> = {}) {
  return installTool({
    layers: new Layers(layersDir),
    layerName: 'tool',
    spec,
    env: {},
    log: cap.log,
    network: { backoffMs: 5 },
    ...extra,
  });
}

function expectNoLayer(): void {
  expect(fs.existsSync(path.join(layersDir, 'tool'))).toBe(false);
  expect(fs.existsSync(path.join(layersDir, 'tool.toml'))).toBe(false);
}

describe('installTool: download and verify', () => {
  it('downloads, checks the pinned sha256 and unpacks into <layer>/bin, timing each step', async () => {
    const a = await published();
    const r = await install(specFor(a), { types: { launch: true } });
    expect(r).toMatchObject({ id: 'tool', version: '1.0.0', source: 'download', path: path.join(layersDir, 'tool', 'bin', 'tool') });
    expect(await run(r.path)).toBe('tool version v1.0.0 (test build)');
    expect(readToml(path.join(layersDir, 'tool.toml'))).toEqual({
      types: { launch: true, build: false, cache: true },
      metadata: { id: 'tool', version: '1.0.0', arch: 'amd64', uri: a.url, sha: `sha256:${a.sha256}` },
    });
    expect(fs.readdirSync(path.join(layersDir, 'tool')).filter((n) => n.startsWith('.download-'))).toEqual([]);
    const log = cap.text();
    expect(log).toContain('- installing tool 1.0.0 (no previous layer)');
    // A duration as lib/log.ts's formatDuration writes it: 85ms, or 1.1s on a slow machine.
    expect(log).toMatch(new RegExp(`- download ${a.url}\\n  - done \\(\\d+(?:ms|\\.\\ds)\\)`));
    expect(log).toContain('verified sha256 (buildpack.toml)');
    expect(log).toMatch(/- unpack tar\.gz\n {2}- done \(\d+(?:ms|\.\ds)\)/);
    const sbom = JSON.parse(fs.readFileSync(path.join(layersDir, 'tool.sbom.cdx.json'), 'utf8'));
    expect(sbom).toMatchObject({ bomFormat: 'CycloneDX', components: [{ name: 'tool', version: '1.0.0', hashes: [{ alg: 'SHA-256', content: a.sha256 }] }] });
    expect(sbom.components[0].purl).toBe(`pkg:generic/tool@1.0.0?download_url=${encodeURIComponent(a.url)}`);
  });

  it('links the executable into <layer>/bin when the archive keeps it elsewhere, under the command name asked for', async () => {
    const a = await published('1.0.0', { version: '1.0.0', top: '', binPath: 'tool' });
    const r = await install(specFor(a, '1.0.0', { stripComponents: 0, bin: 'tool' }), { command: 'tl' });
    expect(r.path).toBe(path.join(layersDir, 'tool', 'bin', 'tl'));
    expect(fs.readlinkSync(r.path)).toBe('../tool');
    expect(await run(r.path)).toContain('v1.0.0');
  });

  it.each(['tar.xz', 'zip', 'none'] as const)('unpacks a %s artifact', async (kind) => {
    const a = await published('1.0.0', { version: '1.0.0', kind, top: kind === 'none' ? '' : 'tool-1.0.0', binPath: kind === 'none' ? 'tool' : 'bin/tool' });
    const r = await install(specFor(a, '1.0.0', { archive: kind, stripComponents: kind === 'none' ? 0 : 1, bin: kind === 'none' ? 'tool' : 'bin/tool' }));
    expect(await run(r.path)).toBe('tool version v1.0.0 (test build)');
    expect(fs.statSync(r.path).mode & 0o111).toBe(0o111);
  });

  it('refuses a download that does not match its checksum: deleted, nothing unpacked, credentials hidden', async () => {
    const a = await published();
    server.route(a.urlPath, (req, res) => {
      if (req.headers.authorization !== `Basic ${Buffer.from('bob:s3cret').toString('base64')}`) return void res.writeHead(401).end();
      res.writeHead(200).end(fs.readFileSync(a.file));
    });
    const url = a.url.replace('http://', 'http://bob:s3cret@');
    const e = await userError(install(specFor({ url, sha256: 'f'.repeat(64) })));
    expect(e.data.id).toBe('deps/checksum-mismatch');
    expect(stableRendering(e)).toMatchSnapshot();
    expect(e.data.seen?.value).toBe(a.url.replace('http://', 'http://bob:***@'));
    expect(e.data.details).toEqual([`expected sha256:${'f'.repeat(64)} (buildpack.toml)`, `actual   sha256:${a.sha256}`]);
    expect(server.count(a.urlPath)).toBe(1);
    expectNoLayer();
    expect(cap.text()).not.toContain('s3cret');
    expect(cap.text()).not.toContain('unpack');
  });

  it('sends URL credentials as Basic auth and keeps them out of the log and the layer metadata', async () => {
    const a = await published();
    const auth: (string | undefined)[] = [];
    server.route(a.urlPath, (req, res) => {
      auth.push(req.headers.authorization);
      res.writeHead(200).end(fs.readFileSync(a.file));
    });
    const r = await install(specFor({ url: a.url.replace('http://', 'http://bob:s3cret@'), sha256: a.sha256 }));
    expect(auth).toEqual([`Basic ${Buffer.from('bob:s3cret').toString('base64')}`]);
    expect(r.layer?.metadata.uri).toBe(a.url.replace('http://', 'http://bob:***@'));
    expect(fs.readFileSync(path.join(layersDir, 'tool.toml'), 'utf8')).not.toContain('s3cret');
    expect(cap.text()).toContain('- download http://bob:***@127.0.0.1');
    expect(cap.text()).not.toContain('s3cret');
  });

  it('refuses to download what it has no checksum for', async () => {
    const a = await published();
    const e = await userError(install(specFor({ url: a.url })));
    expect(e.data.id).toBe('deps/no-checksum');
    expect(stableRendering(e)).toMatchSnapshot();
    expect(e.data.rule).toContain('no checksum is ever invented');
    expect(e.data.fix).toMatch(/buildpack\.toml.*RBP_DEPENDENCY_MIRROR.*RBP_TOOL_TOOL=<path>/);
    expect(server.requests).toEqual([]);
    expectNoLayer();
  });

  it.each(['sha256', 'sha512'] as const)('takes the checksum from the upstream %s checksum file', async (algo) => {
    const a = await published();
    const other = '0'.repeat(algo === 'sha256' ? 64 : 128);
    server.route('/dl/SUMS.txt', `${other}  tool-1.0.0-arm64.tar.gz\n${a[algo]}  ${path.basename(a.file)}\n`);
    const r = await install(specFor({ url: a.url }, '1.0.0', { checksumUri: `${server.url}/dl/SUMS.txt` }));
    expect(await run(r.path)).toContain('v1.0.0');
    expect(server.requests).toEqual(['/dl/SUMS.txt', a.urlPath]);
    expect(cap.text()).toContain(`verified ${algo} (${server.url}/dl/SUMS.txt)`);
  });

  it('refuses a checksum file that does not list the artifact, before downloading it', async () => {
    const a = await published();
    server.route('/dl/SUMS.txt', `${'0'.repeat(64)}  something-else.tar.gz\n`);
    const e = await userError(install(specFor({ url: a.url }, '1.0.0', { checksumUri: `${server.url}/dl/SUMS.txt` })));
    expect(e.data.id).toBe('deps/checksum-not-listed');
    expect(stableRendering(e)).toMatchSnapshot();
    expect(server.count(a.urlPath)).toBe(0);
  });
});

/**
 * A real HTTPS server on 127.0.0.1 with a certificate made here (openssl), serving one file. The test
 * process accepts that certificate only while the server runs (NODE_TLS_REJECT_UNAUTHORIZED).
 */
async function httpsServing(file: string): Promise<{ url: string; requests: string[]; close: () => Promise<void> }> {
  const dir = tempDir('rbp-deps-tls-');
  await execa('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    path.join(dir, 'key.pem'),
    '-out',
    path.join(dir, 'cert.pem'),
  ]);
  const requests: string[] = [];
  const server = https.createServer({ key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) }, (req, res) => {
    requests.push(req.url ?? '/');
    res.writeHead(200).end(fs.readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const before = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/releases/${path.basename(file)}`,
    requests,
    close: async () => {
      if (before === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = before;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('installTool: no checksum published (RBP_REQUIRE_CHECKSUMS)', () => {
  it('downloads a release over HTTPS, warns with its sha256, records it in the SBOM, and keeps it when the layer is reused', async () => {
    const a = await published();
    const tls = await httpsServing(a.file);
    try {
      const r = await install(specFor({ url: tls.url }));
      expect(r.source).toBe('download');
      expect(await run(r.path)).toContain('v1.0.0');
      expect(cap.text()).toContain(
        `tool 1.0.0: no checksum is published or pinned, so the download was not verified; it came over HTTPS from ${tls.url}, sha256:${a.sha256}`,
      );
      expect(cap.text()).toContain('Set RBP_REQUIRE_CHECKSUMS=1 to refuse such downloads.');
      const sbomFile = path.join(layersDir, 'tool.sbom.cdx.json');
      const sbom = () => JSON.parse(fs.readFileSync(sbomFile, 'utf8'));
      expect(sbom().components[0].hashes).toEqual([{ alg: 'SHA-256', content: a.sha256 }]);

      // A build that reuses the layer has its SBOM back (restore), and the sha256 in it.
      const again = await install(specFor({ url: tls.url }));
      expect(again.source).toBe('cache');
      expect(tls.requests).toHaveLength(1);
      expect(sbom().components[0].hashes).toEqual([{ alg: 'SHA-256', content: a.sha256 }]);
    } finally {
      await tls.close();
    }
  });

  it('refuses that download when RBP_REQUIRE_CHECKSUMS=1, before any request', async () => {
    const a = await published();
    const tls = await httpsServing(a.file);
    try {
      const e = await userError(install(specFor({ url: tls.url }), { env: { RBP_REQUIRE_CHECKSUMS: '1' } }));
      expect(e.data.id).toBe('deps/no-checksum');
      expect(e.data.rule).toContain('RBP_REQUIRE_CHECKSUMS=1: every download is verified');
      expect(e.data.fix).toContain('or unset RBP_REQUIRE_CHECKSUMS');
      expect(tls.requests).toEqual([]);
      expectNoLayer();
    } finally {
      await tls.close();
    }
  });

  it('refuses a value of RBP_REQUIRE_CHECKSUMS that is neither on nor off', async () => {
    const a = await published();
    const e = await userError(install(specFor({ url: a.url.replace('http://', 'https://') }), { env: { RBP_REQUIRE_CHECKSUMS: 'maybe' } }));
    expect(e.data.id).toBe('config/RBP_REQUIRE_CHECKSUMS/invalid');
    expect(e.data.seen).toMatchObject({ what: 'RBP_REQUIRE_CHECKSUMS', value: 'maybe' });
    expect(server.requests).toEqual([]);
  });

  it('still refuses a mirror file without a .sha256 when nothing is pinned', async () => {
    const a = await published();
    const m = path.join(root, 'mirror-nosum', 'tool', '1.0.0');
    fs.mkdirSync(m, { recursive: true });
    fs.copyFileSync(a.file, path.join(m, path.basename(a.file)));
    const e = await userError(
      install(specFor({ url: a.url.replace('http://', 'https://') }), { env: { RBP_DEPENDENCY_MIRROR: path.dirname(path.dirname(m)) } }),
    );
    expect(e.data.id).toBe('deps/no-checksum');
    expectNoLayer();
  });
});

describe('installTool: mirror', () => {
  function mirrorDir(a: Artifact, sum?: string): string {
    const m = path.join(root, 'mirror');
    const dir = path.join(m, 'tool', '1.0.0');
    fs.mkdirSync(dir, { recursive: true });
    fs.copyFileSync(a.file, path.join(dir, path.basename(a.file)));
    if (sum !== undefined) fs.writeFileSync(path.join(dir, `${path.basename(a.file)}.sha256`), sum);
    return m;
  }

  it.each([
    ['a directory path', (d: string) => d],
    ['a file:// URL', (d: string) => `file://${d}`],
  ])('reads the artifact and its .sha256 from a local mirror given as %s, never upstream', async (_label, form) => {
    const a = await published();
    const m = mirrorDir(a, `${a.sha256}  ${path.basename(a.file)}\n`);
    const r = await install(specFor({ url: a.url }), { env: { RBP_DEPENDENCY_MIRROR: form(m) } });
    expect(r.source).toBe('mirror');
    expect(await run(r.path)).toContain('v1.0.0');
    expect(server.requests).toEqual([]);
    expect(cap.text()).toContain('verified sha256 (the mirror)');
  });

  it('reads from an http mirror at <mirror>/<id>/<version>/<file>, with the pinned checksum', async () => {
    const a = await published();
    server.file(`/mirror/tool/1.0.0/${path.basename(a.file)}`, a.file);
    const upstream = specFor({ url: `https://upstream.invalid/releases/${path.basename(a.file)}`, sha256: a.sha256 });
    const r = await install(upstream, { env: { RBP_DEPENDENCY_MIRROR: `${server.url}/mirror/` } });
    expect(r.source).toBe('mirror');
    expect(server.requests).toEqual([`/mirror/tool/1.0.0/${path.basename(a.file)}.sha256`, `/mirror/tool/1.0.0/${path.basename(a.file)}`]);
    expect(readToml<{ metadata: { uri: string } }>(path.join(layersDir, 'tool.toml')).metadata.uri).toContain('upstream.invalid');
  });

  it('refuses a mirror whose checksum disagrees with the pinned one', async () => {
    const a = await published();
    const m = mirrorDir(a, `${'e'.repeat(64)}\n`);
    const e = await userError(install(specFor(a), { env: { RBP_DEPENDENCY_MIRROR: m } }));
    expect(e.data.id).toBe('deps/mirror-checksum-conflict');
    expect(stableRendering(e)).toMatchSnapshot();
    expect(e.data.details).toEqual([`pinned (buildpack.toml): sha256:${a.sha256}`, `mirror: sha256:${'e'.repeat(64)}`]);
    expectNoLayer();
  });

  it('says which mirror path is missing instead of going upstream', async () => {
    const a = await published();
    const m = path.join(root, 'empty-mirror');
    fs.mkdirSync(m);
    const e = await userError(install(specFor(a), { env: { RBP_DEPENDENCY_MIRROR: m } }));
    expect(e.data.id).toBe('deps/download-failed');
    expect(stableRendering(e)).toMatchSnapshot();
    expect(e.data.seen?.value).toBe(path.join(m, 'tool', '1.0.0', path.basename(a.file)));
    expect(e.data.fix).toContain('RBP_DEPENDENCY_MIRROR');
    expect(server.requests).toEqual([]);
  });

  it('refuses a mirror directory that does not exist', async () => {
    const a = await published();
    const e = await userError(install(specFor(a), { env: { RBP_DEPENDENCY_MIRROR: path.join(root, 'nope') } }));
    expect(e.data.id).toBe('deps/mirror-invalid');
    expect(stableRendering(e)).toMatchSnapshot();
  });
});

describe('installTool: cache layer', () => {
  it('reuses the cached layer without touching the network when the metadata is unchanged', async () => {
    const a = await published();
    const first = await install(specFor(a));
    const second = await install(specFor(a));
    expect(second).toMatchObject({ source: 'cache', version: '1.0.0', path: first.path });
    expect(second.layer?.state).toBe('reused');
    expect(server.count(a.urlPath)).toBe(1);
    expect(cap.text()).toContain('- reused tool 1.0.0 (cached)');
    expect(await run(second.path)).toContain('v1.0.0');
  });

  it('reinstalls when the version changes', async () => {
    const a = await published('1.0.0');
    const b = await published('1.1.0');
    await install(specFor(a, '1.0.0'));
    const r = await install(specFor(b, '1.1.0'));
    expect(r.source).toBe('download');
    expect(server.count(b.urlPath)).toBe(1);
    expect(cap.text()).toContain('- installing tool 1.1.0 (version changed (1.0.0 → 1.1.0))\n');
    expect(await run(r.path)).toContain('v1.1.0');
  });

  it('reinstalls a cached layer whose executable is gone', async () => {
    const a = await published();
    const first = await install(specFor(a));
    fs.rmSync(first.path);
    const r = await install(specFor(a));
    expect(r.source).toBe('download');
    expect(server.count(a.urlPath)).toBe(2);
    expect(await run(r.path)).toContain('v1.0.0');
  });
});

describe('installTool: retries', () => {
  it('retries a 503 and succeeds', async () => {
    const a = await published();
    const body = fs.readFileSync(a.file);
    server.route(a.urlPath, (_req, res, n) => (n === 1 ? res.writeHead(503, 'Service Unavailable').end() : res.writeHead(200).end(body)));
    const r = await install(specFor(a));
    expect(await run(r.path)).toContain('v1.0.0');
    expect(server.count(a.urlPath)).toBe(2);
    expect(cap.text()).toContain('attempt 1 of 3 failed (HTTP 503 Service Unavailable); retrying in 5ms');
  });

  it('retries a dropped connection', async () => {
    const a = await published();
    const body = fs.readFileSync(a.file);
    server.route(a.urlPath, (req, res, n) => (n === 1 ? req.socket.destroy() : res.writeHead(200).end(body)));
    const r = await install(specFor(a));
    expect(r.source).toBe('download');
    expect(server.count(a.urlPath)).toBe(2);
  });

  it('gives up after 3 attempts and leaves no layer', async () => {
    const a = await published();
    server.route(a.urlPath, (_req, res) => res.writeHead(502).end());
    const e = await userError(install(specFor(a)));
    expect(e.data.id).toBe('deps/download-failed');
    expect(e.data.details).toEqual(['HTTP 502 Bad Gateway']);
    expect(server.count(a.urlPath)).toBe(3);
    expectNoLayer();
  });

  it('does not retry a 404', async () => {
    const e = await userError(install(specFor({ url: `${server.url}/dl/missing.tar.gz`, sha256: 'a'.repeat(64) })));
    expect(e.data.id).toBe('deps/download-failed');
    expect(server.count('/dl/missing.tar.gz')).toBe(1);
  });

  it('times out a server that never answers, and retries', async () => {
    server.route('/dl/slow.tar.gz', () => {});
    const e = await userError(
      install(specFor({ url: `${server.url}/dl/slow.tar.gz`, sha256: 'a'.repeat(64) }), { network: { backoffMs: 5, timeoutMs: 200, attempts: 2 } }),
    );
    expect(e.data.id).toBe('deps/download-failed');
    expect(e.data.details?.[0]).toMatch(/timeout/i);
    expect(server.count('/dl/slow.tar.gz')).toBe(2);
  });
});
