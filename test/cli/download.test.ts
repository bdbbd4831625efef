/**
 * Downloads: a progress line when a transfer takes more than a second, and HTTP(S)_PROXY/NO_PROXY
 * honoured, through a real forwarding proxy started here (CONNECT tunnels, as curl and undici use).
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { Writable, type Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downloadFile, fetchText, proxyFor } from '../../lib/deps/download.ts';
import { Logger } from '../../lib/log.ts';
import { tmpDir } from '../helpers/rbp.ts';

function captured(): { log: Logger; text: () => string } {
  let buf = '';
  const out = new Writable({
    write(c, _e, cb) {
      buf += String(c);
      cb();
    },
  });
  return { log: new Logger({ out, color: false, level: 'normal' }), text: () => buf };
}

const SIZE = 3 * 2 ** 20;
let server: http.Server;
let origin: string;
let proxy: http.Server;
let proxyUrl: string;
const tunnels: string[] = [];
const sockets = new Set<Duplex>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/slow.bin') {
      // 3 MiB in 24 chunks over about 2.4 s.
      res.writeHead(200, { 'content-length': String(SIZE) });
      let sent = 0;
      const chunk = Buffer.alloc(SIZE / 24, 7);
      const timer = setInterval(() => {
        res.write(chunk);
        if (++sent === 24) {
          clearInterval(timer);
          res.end();
        }
      }, 100);
      return;
    }
    res.end('hello through whatever path');
  });
  server.on('connection', (s) => sockets.add(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;

  // A forwarding proxy: CONNECT host:port opens a tunnel (what undici's proxy agent asks for).
  proxy = http.createServer((_req, res) => res.writeHead(405).end());
  proxy.on('connect', (req, client, head) => {
    tunnels.push(req.url!);
    const [host, port] = req.url!.split(':');
    const upstream = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    sockets.add(client).add(upstream);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await Promise.all([new Promise((r) => server.close(r)), new Promise((r) => proxy.close(r))]);
});

describe('download progress', () => {
  it('a download over a second logs progress with size and percentage, then its total', async () => {
    const { log, text } = captured();
    const to = path.join(tmpDir(), 'slow.bin');
    const r = await downloadFile(`${origin}/slow.bin`, to, { what: 'slowtool 1.0', algorithms: ['sha256'], log });
    expect(r.bytes).toBe(SIZE);
    expect(text()).toMatch(/^ {2}- downloading slowtool 1\.0: \d+\.\d MiB of 3\.0 MiB \(\d+%\) at \d+\.\d MiB\/s$/m);
    expect(text()).toMatch(/^ {2}- downloading slowtool 1\.0: 3\.0 MiB in [\d.ms]+$/m);
  });

  it('a quick download logs no progress', async () => {
    const { log, text } = captured();
    const src = path.join(tmpDir(), 'small.bin');
    fs.writeFileSync(src, 'x'.repeat(1000));
    await downloadFile(src, path.join(tmpDir(), 'copy.bin'), { what: 'small', algorithms: ['sha256'], log });
    expect(text()).not.toContain('downloading small');
  });
});

describe('proxies from the environment', () => {
  const saved = { HTTP_PROXY: process.env.HTTP_PROXY, NO_PROXY: process.env.NO_PROXY, http_proxy: process.env.http_proxy, no_proxy: process.env.no_proxy };
  afterAll(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it('HTTP_PROXY carries the request; NO_PROXY bypasses it', async () => {
    delete process.env.http_proxy;
    delete process.env.no_proxy;
    process.env.HTTP_PROXY = proxyUrl;
    delete process.env.NO_PROXY;
    tunnels.length = 0;
    expect(await fetchText(`${origin}/doc`, { what: 'a document' })).toBe('hello through whatever path');
    expect(tunnels).toEqual([new URL(origin).host]);

    process.env.NO_PROXY = '127.0.0.1';
    tunnels.length = 0;
    expect(await fetchText(`${origin}/doc`, { what: 'a document' })).toBe('hello through whatever path');
    expect(tunnels).toEqual([]);
  });

  it('names the proxy a URL goes through for the verbose log: HTTPS_PROXY for https, NO_PROXY suffixes, credentials hidden', () => {
    const env = { HTTPS_PROXY: 'http://user:pw@proxy.internal:3128', HTTP_PROXY: 'http://plain:8080', NO_PROXY: 'localhost,.corp.example' };
    expect(proxyFor('https://registry.npmjs.org/x', env)).toBe('http://user:***@proxy.internal:3128');
    expect(proxyFor('http://example.org/x', env)).toBe('http://plain:8080');
    expect(proxyFor('https://npm.corp.example/x', env)).toBeUndefined();
    expect(proxyFor('http://localhost:4873/x', env)).toBeUndefined();
    expect(proxyFor('https://example.org/x', {})).toBeUndefined();
  });

  it('a proxy that is down fails the download with the URL, not silently going direct', async () => {
    const dead = net.createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const port = (dead.address() as net.AddressInfo).port;
    await new Promise((r) => dead.close(r));
    process.env.HTTP_PROXY = `http://user:pw@127.0.0.1:${port}`;
    delete process.env.NO_PROXY;
    await expect(fetchText(`${origin}/doc`, { what: 'a document', attempts: 1 })).rejects.toThrow(/Could not download a document/);
  });
});
