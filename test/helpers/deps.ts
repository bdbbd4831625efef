/**
 * Test helpers for lib/deps: real archives holding a small executable shell script, a real HTTP
 * server on 127.0.0.1 that counts requests, and a logger whose output can be read back.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { execa } from 'execa';
import * as tar from 'tar';
import { Logger } from '../../lib/log.ts';

export function tempDir(prefix = 'rbp-deps-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export interface Artifact {
  file: string;
  sha256: string;
  sha512: string;
  /** `sha512-<base64>`, as npm publishes it. */
  integrity: string;
}

export function digestsOf(file: string): Omit<Artifact, 'file'> {
  const data = fs.readFileSync(file);
  const sha512 = crypto.createHash('sha512').update(data);
  return {
    sha256: crypto.createHash('sha256').update(data).digest('hex'),
    sha512: sha512.copy().digest('hex'),
    integrity: `sha512-${sha512.digest('base64')}`,
  };
}

export function toolScript(name: string, version: string): string {
  return `#!/bin/sh\necho "${name} version v${version} (test build)"\n`;
}

/**
 * Writes an archive holding `<top>/<binPath>` (a script printing `<name> version v<version>`).
 * `top` is the wrapping directory (`package` for npm), empty for none.
 */
export async function makeArchive(
  dir: string,
  opts: { name?: string; version: string; kind?: 'tar.gz' | 'tar.xz' | 'zip' | 'none'; top?: string; binPath?: string; fileName?: string },
): Promise<Artifact> {
  const name = opts.name ?? 'tool';
  const kind = opts.kind ?? 'tar.gz';
  const top = opts.top ?? '';
  const binPath = opts.binPath ?? name;
  const ext = kind === 'none' ? '' : `.${kind}`;
  const file = path.join(dir, opts.fileName ?? `${name}-${opts.version}${top ? `-${top}` : ''}${ext}`);
  const src = fs.mkdtempSync(path.join(dir, '.src-'));
  const exe = path.join(src, top, binPath);
  fs.mkdirSync(path.dirname(exe), { recursive: true });
  fs.writeFileSync(exe, toolScript(name, opts.version), { mode: 0o755 });
  fs.writeFileSync(path.join(src, top, 'LICENSE'), 'test\n');
  const entries = fs.readdirSync(src);
  if (kind === 'tar.gz') await tar.c({ gzip: true, file, cwd: src, portable: true }, entries);
  else if (kind === 'tar.xz') {
    const plain = `${file}.tmp.tar`;
    await tar.c({ file: plain, cwd: src, portable: true }, entries);
    await execa('xz', ['-c', plain], { stdout: { file } });
    fs.rmSync(plain);
  } else if (kind === 'zip') await execa('zip', ['-q', '-r', file, ...entries], { cwd: src });
  else fs.copyFileSync(exe, file);
  fs.rmSync(src, { recursive: true, force: true });
  return { file, ...digestsOf(file) };
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, count: number) => void;

export interface TestServer {
  url: string;
  /** Every request's path, in order. */
  requests: string[];
  /** Requests for one path. */
  count(p: string): number;
  route(p: string, handler: Handler | string | Buffer): void;
  /** Serves a file at `p`. */
  file(p: string, file: string): void;
  close(): Promise<void>;
}

export async function startServer(): Promise<TestServer> {
  const routes = new Map<string, Handler>();
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const p = (req.url ?? '/').split('?')[0]!;
    requests.push(p);
    const h = routes.get(p);
    if (!h) {
      res.writeHead(404).end('not found');
      return;
    }
    h(req, res, requests.filter((r) => r === p).length);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const route = (p: string, handler: Handler | string | Buffer) =>
    routes.set(p, typeof handler === 'function' ? handler : (_req, res) => res.writeHead(200).end(handler));
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    count: (p) => requests.filter((r) => r === p).length,
    route,
    file: (p, file) => route(p, fs.readFileSync(file)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function captureLog(): { log: Logger; text: () => string } {
  let out = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString();
      done();
    },
  });
  return { log: new Logger({ out: stream, color: false }), text: () => out };
}

/** Runs an installed executable and returns what it printed. */
export async function run(file: string, args: string[] = []): Promise<string> {
  return (await execa(file, args)).stdout;
}
