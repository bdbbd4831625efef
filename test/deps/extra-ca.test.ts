/**
 * NODE_EXTRA_CA_CERTS deferred by the bootstraps (lib/cnb/extra-ca.ts): Node.js 20 would parse the
 * file at every buildpack start. The bootstrap hands it over under DEFERRED_CA_CERTS; the
 * buildpack gives it back to the processes it starts, and its own downloads still trust the file.
 */
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFERRED_CA_CERTS, deferredExtraCa, takeBackExtraCa } from '../../lib/cnb/extra-ca.ts';
import { fetchText } from '../../lib/deps/download.ts';
import { isUserError } from '../../lib/errors.ts';
import { appWith, envArgs, ROOT, tmpDir } from '../helpers/rbp.ts';

/** dist's bin/build bootstrap in a buildpack of its own, whose lib/build.cjs prints what it was given. */
function bootstrapPrintingEnv(): string {
  const bp = tmpDir('rbp-ca-bp-');
  fs.mkdirSync(path.join(bp, 'bin'));
  fs.mkdirSync(path.join(bp, 'lib'));
  fs.copyFileSync(path.join(ROOT, 'dist', 'buildpacks', 'static', 'bin', 'build'), path.join(bp, 'bin', 'build'));
  fs.writeFileSync(
    path.join(bp, 'lib', 'build.cjs'),
    `process.stdout.write(JSON.stringify({ extra: process.env.NODE_EXTRA_CA_CERTS ?? null, deferred: process.env.${DEFERRED_CA_CERTS} ?? null }));`,
  );
  return bp;
}

async function bootstrapSees(env: Record<string, string>): Promise<{ extra: string | null; deferred: string | null }> {
  const bp = bootstrapPrintingEnv();
  const r = await execa(path.join(bp, 'bin', 'build'), [], { env: { PATH: process.env.PATH!, CNB_BUILDPACK_DIR: bp, ...env }, extendEnv: false });
  return JSON.parse(r.stdout);
}

describe('the bootstraps defer NODE_EXTRA_CA_CERTS', () => {
  it('hand the file over under the deferred name, so Node.js starts without parsing it', async () => {
    expect(await bootstrapSees({ NODE_EXTRA_CA_CERTS: '/etc/some-ca.pem' })).toEqual({ extra: null, deferred: '/etc/some-ca.pem' });
  });

  it('leave it to Node.js when NODE_OPTIONS picks its certificate store', async () => {
    expect(await bootstrapSees({ NODE_EXTRA_CA_CERTS: '/etc/some-ca.pem', NODE_OPTIONS: '--use-openssl-ca' })).toEqual({
      extra: '/etc/some-ca.pem',
      deferred: null,
    });
  });

  it('do nothing when it is unset', async () => {
    expect(await bootstrapSees({})).toEqual({ extra: null, deferred: null });
  });

  it('every bootstrap of dist uses the name lib/cnb/extra-ca.ts takes back', () => {
    for (const name of ['node', 'static', 'phpserver']) {
      for (const entry of ['detect', 'build']) {
        expect(fs.readFileSync(path.join(ROOT, 'dist', 'buildpacks', name, 'bin', entry), 'utf8'), `${name}/bin/${entry}`).toContain(
          `export ${DEFERRED_CA_CERTS}\n`,
        );
      }
    }
  });
});

describe('dist/rbp, the bin, defers it as the bootstraps do', () => {
  const BIN = path.join(ROOT, 'dist', 'rbp');
  // Node.js 20 reads the file at its start and warns when it cannot: the warning shows who read it.
  const missing = { NODE_EXTRA_CA_CERTS: '/nonexistent/rbp-test-ca.pem' };

  it('rbp starts without Node.js reading the file (node rbp.js, the control, does read it)', async () => {
    const control = await execa('node', ['--', path.join(ROOT, 'dist', 'rbp.js'), '--version'], { env: missing, reject: false });
    expect(control.stderr).toContain('Ignoring extra certs from `/nonexistent/rbp-test-ca.pem`');
    const r = await execa(BIN, ['--version'], { env: missing, reject: false });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^rbp /);
    expect(r.stderr).toBe('');
  });
});

describe('takeBackExtraCa', () => {
  it('puts NODE_EXTRA_CA_CERTS back and drops the deferred name', () => {
    const env: NodeJS.ProcessEnv = { [DEFERRED_CA_CERTS]: '/etc/some-ca.pem' };
    takeBackExtraCa(env);
    expect(env).toEqual({ NODE_EXTRA_CA_CERTS: '/etc/some-ca.pem' });
    expect(deferredExtraCa()).toBe('/etc/some-ca.pem');
    const untouched: NodeJS.ProcessEnv = { NODE_EXTRA_CA_CERTS: '/a.pem' };
    takeBackExtraCa(untouched);
    expect(untouched).toEqual({ NODE_EXTRA_CA_CERTS: '/a.pem' });
    takeBackExtraCa({ [DEFERRED_CA_CERTS]: '' });
    expect(deferredExtraCa()).toBeUndefined();
  });
});

describe('a real build with NODE_EXTRA_CA_CERTS', () => {
  // `node rbp.js` (Node.js parses the file at its start) and dist/rbp, the bin (rbp takes it back).
  it.each([
    ['node rbp.js', 'node', ['--', path.join(ROOT, 'dist', 'rbp.js')]],
    ['dist/rbp', path.join(ROOT, 'dist', 'rbp'), []],
  ])('through %s, gives the build command the variable as rbp was given it, and not the deferred name', async (_how, file, pre) => {
    const ca = path.join(tmpDir('rbp-ca-'), 'ca.pem');
    // A real certificate: a Node.js that reads the file at its start parses it.
    fs.copyFileSync((await selfSignedCert()).cert, ca);
    const app = appWith({ 'src/index.html': '<p>hi</p>\n' });
    const build = ['build', app, '--out', path.join(tmpDir(), 'out'), '--type', 'static'];
    const command = `echo "saw ca=\${NODE_EXTRA_CA_CERTS-unset} deferred=\${${DEFERRED_CA_CERTS}-unset}"; exit 3`;
    const r = await execa(file, [...pre, ...build, ...envArgs({ CC_BUILD_COMMAND: command })], {
      env: { NODE_EXTRA_CA_CERTS: ca, NO_COLOR: '1' },
      reject: false,
      all: true,
    });
    expect(r.exitCode).not.toBe(0);
    expect(r.all).toContain(`saw ca=${ca} deferred=unset`);
  });
});

/** A self-signed certificate for 127.0.0.1, made with openssl. */
async function selfSignedCert(): Promise<{ key: string; cert: string }> {
  const dir = tmpDir('rbp-ca-cert-');
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  await execa('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    key,
    '-out',
    cert,
  ]);
  return { key, cert };
}

describe('downloads trust a deferred NODE_EXTRA_CA_CERTS', () => {
  let server: https.Server;
  let url: string;
  let cert: string;
  beforeAll(async () => {
    const made = await selfSignedCert();
    cert = made.cert;
    server = https.createServer({ key: fs.readFileSync(made.key), cert: fs.readFileSync(made.cert) }, (_req, res) => res.end('trusted\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/doc`;
  });
  afterAll(async () => {
    takeBackExtraCa({ [DEFERRED_CA_CERTS]: '' });
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('reaches a server whose certificate only that file vouches for', async () => {
    expect(process.env.NODE_TLS_REJECT_UNAUTHORIZED).toBeUndefined();
    takeBackExtraCa({ [DEFERRED_CA_CERTS]: cert });
    expect(await fetchText(url, { what: 'a document', attempts: 1 })).toBe('trusted\n');
  });

  it('refuses that server without it, as Node.js does', async () => {
    takeBackExtraCa({ [DEFERRED_CA_CERTS]: '' });
    let err: unknown;
    try {
      await fetchText(url, { what: 'a document', attempts: 1 });
    } catch (e) {
      err = e;
    }
    expect(isUserError(err)).toBe(true);
    expect(JSON.stringify((err as { data: unknown }).data)).toMatch(/self[- ]signed certificate|DEPTH_ZERO_SELF_SIGNED_CERT/i);
  });
});
