import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderUserError } from '../../../lib/errors.ts';
import { maskSecrets as hideSecrets } from '../../../lib/mask.ts';
import { registryAuth, registryRefused, registryRefusedError, registryUrl, withRegistryAuth } from './registry-auth.ts';

describe('registryAuth (contract, node rule 9)', () => {
  it('NPM_TOKEN → //<host>/:_authToken, the npmrc naming a variable that holds it', () => {
    const a = registryAuth({ NPM_TOKEN: 't0k' });
    expect(a.registryLines).toBe('');
    expect(a.credentialLines).toBe('//registry.npmjs.org/:_authToken=${RBP_NPM_AUTH_TOKEN}\n');
    expect(a.secretEnv).toEqual({ RBP_NPM_AUTH_TOKEN: 't0k' });
    const b = registryAuth({ NPM_TOKEN: 't0k', CC_NPM_REGISTRY: 'npm.example.com' });
    expect(b.registryLines + b.credentialLines).toBe('registry=https://npm.example.com/\n//npm.example.com/:_authToken=${RBP_NPM_AUTH_TOKEN}\n');
  });
  it('CC_NPM_BASIC_AUTH is Base64-encoded by the buildpack', () => {
    const a = registryAuth({ CC_NPM_BASIC_AUTH: 'alice:pw', CC_NPM_REGISTRY: 'http://127.0.0.1:4873' });
    expect(a.registryLines + a.credentialLines).toBe(
      'registry=http://127.0.0.1:4873/\n//127.0.0.1:4873/:_auth=${RBP_NPM_AUTH_BASIC}\n//127.0.0.1:4873/:always-auth=true\n',
    );
    expect(a.secretEnv).toEqual({ RBP_NPM_AUTH_BASIC: Buffer.from('alice:pw').toString('base64') });
  });
  it('refuses both variables without showing either', () => {
    let message = '';
    try {
      registryAuth({ NPM_TOKEN: 'secret-token', CC_NPM_BASIC_AUTH: 'bob:secret-pw' });
    } catch (e) {
      message = JSON.stringify((e as { data: unknown }).data);
    }
    expect(message).toContain('node/registry/both-auth');
    expect(message).not.toContain('secret-token');
    expect(message).not.toContain('secret-pw');
  });
  it('refuses credentials in CC_NPM_REGISTRY', () => {
    expect(() => registryUrl('https://u:p@npm.example.com')).toThrow(/CC_NPM_REGISTRY/);
  });
  it('writes the npmrc only while the install runs, never the secret itself, and keeps the project file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-auth-'));
    fs.writeFileSync(path.join(dir, '.npmrc'), 'save-exact=true\n');
    const env = await withRegistryAuth(dir, registryAuth({ NPM_TOKEN: 'abc123' }), async (e) => {
      expect(fs.readFileSync(path.join(dir, '.npmrc'), 'utf8')).toBe('save-exact=true\n//registry.npmjs.org/:_authToken=${RBP_NPM_AUTH_TOKEN}\n');
      return e;
    });
    expect(env).toEqual({ RBP_NPM_AUTH_TOKEN: 'abc123' });
    expect(fs.readFileSync(path.join(dir, '.npmrc'), 'utf8')).toBe('save-exact=true\n');
  });
  it('pnpm: the credential lines go to the user-level npmrc, registry= to the project one', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-auth-'));
    const userconfig = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-auth-user-')), 'npmrc');
    fs.writeFileSync(userconfig, '');
    const env = await withRegistryAuth(
      dir,
      registryAuth({ NPM_TOKEN: 'abc123', CC_NPM_REGISTRY: 'npm.example.com' }),
      async (e) => {
        expect(fs.readFileSync(path.join(dir, '.npmrc'), 'utf8')).toBe('registry=https://npm.example.com/\n');
        expect(fs.readFileSync(userconfig, 'utf8')).toBe('//npm.example.com/:_authToken=${RBP_NPM_AUTH_TOKEN}\n');
        return e;
      },
      { credentialsIn: 'user-npmrc', userconfig },
    );
    expect(env).toEqual({ RBP_NPM_AUTH_TOKEN: 'abc123' });
    expect(fs.existsSync(path.join(dir, '.npmrc'))).toBe(false);
  });
  it('Yarn Berry reads no npmrc: none is written, its own variables carry the credentials', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-auth-'));
    const env = await withRegistryAuth(
      dir,
      registryAuth({ NPM_TOKEN: 'abc123', CC_NPM_REGISTRY: 'npm.example.com' }),
      async (e) => {
        expect(fs.existsSync(path.join(dir, '.npmrc'))).toBe(false);
        return e;
      },
      { credentialsIn: 'environment' },
    );
    expect(env).toEqual({ YARN_NPM_REGISTRY_SERVER: 'https://npm.example.com', YARN_NPM_AUTH_TOKEN: 'abc123', YARN_NPM_ALWAYS_AUTH: 'true' });
  });
  it('hides secrets in tool output', () => {
    expect(hideSecrets('token abc123 used', { NPM_TOKEN: 'abc123' })).toBe('token *** used');
  });
  it('a host name gets https, a loopback host http, an explicit scheme wins', () => {
    expect(registryUrl('npm.example.com')).toBe('https://npm.example.com/');
    expect(registryUrl('npm.example.com:8443/path')).toBe('https://npm.example.com:8443/path/');
    expect(registryUrl('127.0.0.1:4873')).toBe('http://127.0.0.1:4873/');
    expect(registryUrl('localhost:4873')).toBe('http://localhost:4873/');
    expect(registryUrl('[::1]:4873')).toBe('http://[::1]:4873/');
    expect(registryUrl('https://127.0.0.1:4873')).toBe('https://127.0.0.1:4873/');
    expect(registryUrl('http://npm.internal')).toBe('http://npm.internal/');
    expect(registryUrl('127.0.0.1.example.com')).toBe('https://127.0.0.1.example.com/');
    expect(registryAuth({ NPM_TOKEN: 't0k', CC_NPM_REGISTRY: '127.0.0.1:4873' }).registryLines).toBe('registry=http://127.0.0.1:4873/\n');
  });
  it('recognises a registry that refused the request', () => {
    expect(registryRefused('npm error code E401\nnpm error Unable to authenticate, need: Basic')).toBe(true);
    expect(registryRefused('npm error code E403\nnpm error 403 403 Forbidden - GET http://x/@private%2fgreeting')).toBe(true);
    expect(registryRefused('npm error code ENEEDAUTH')).toBe(true);
    expect(registryRefused(' ERR_PNPM_FETCH_401  GET http://x/@private%2Fgreeting: Unauthorized - 401')).toBe(true);
    expect(registryRefused('npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/nope')).toBe(false);
    expect(registryRefused('npm error code ETARGET')).toBe(false);
  });
  it('explains a refused registry by what was (not) sent', () => {
    const none = registryRefusedError(
      registryAuth({ CC_NPM_REGISTRY: '127.0.0.1:4873' }),
      { CC_NPM_REGISTRY: '127.0.0.1:4873' },
      'npm install --no-audit --no-fund',
    );
    expect(renderUserError(none.data)).toMatchInlineSnapshot(`
      "! ERROR The registry 127.0.0.1:4873 refused to serve the dependencies: no credentials were sent (NPM_TOKEN and CC_NPM_BASIC_AUTH are unset)
      !
      ! Seen: registry: "http://127.0.0.1:4873/" (CC_NPM_REGISTRY)
      ! Rule: A private registry is reached with NPM_TOKEN (a token, written as //<host>/:_authToken) or CC_NPM_BASIC_AUTH (<user>:<password>), not both; CC_NPM_REGISTRY names its host.
      !   command: npm install --no-audit --no-fund
      ! Fix:  Set NPM_TOKEN (or CC_NPM_BASIC_AUTH=<user>:<password>) on the application to credentials that may read from 127.0.0.1:4873, and deploy again.
      ! (error id: node/registry/refused)"
    `);
    const token = registryRefusedError(registryAuth({ NPM_TOKEN: 'secret-tok' }), { NPM_TOKEN: 'secret-tok' }, 'npm ci');
    expect(token.data.title).toBe('The registry registry.npmjs.org refused to serve the dependencies: NPM_TOKEN was sent');
    expect(JSON.stringify(token.data)).not.toContain('secret-tok');
  });
});
