/**
 * Private registry access (contract, node rule 9 and "Authentication"): NPM_TOKEN becomes
 * `//<registry_host>/:_authToken=<token>` in an npmrc; CC_NPM_BASIC_AUTH (`user:password`) is
 * Base64-encoded into `_auth`; CC_NPM_REGISTRY sets the host. The npmrc exists only while the
 * install runs and is removed whatever happens: a secret never reaches the log, a layer, the cache
 * or the built app.
 *
 * The secret itself is never written to disk, not even to that npmrc: its lines name an environment
 * variable (`_authToken=${RBP_NPM_AUTH_TOKEN}`), which npm, pnpm, Yarn 1 and Bun expand when they
 * read an npmrc, and the install process alone gets the value in its environment. A build killed
 * with SIGKILL mid-install leaves at most that placeholder behind. Yarn Berry reads no npmrc: it
 * gets its own variables (YARN_NPM_AUTH_TOKEN, YARN_NPM_AUTH_IDENT).
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../../lib/errors.ts';
import type { CredentialsIn } from '../../../lib/js-project/package-managers.ts';
import { isSet, raw, value } from '../../../lib/config/read.ts';

export const DEFAULT_REGISTRY = 'https://registry.npmjs.org/';

export interface RegistryAuth {
  /** The registry URL, with a trailing slash; never holds credentials. */
  registry: string;
  kind: 'token' | 'basic' | 'none';
  /** The npmrc line that names the registry (`registry=…`), or nothing for the default one. */
  registryLines: string;
  /** The npmrc credential lines (npm, pnpm, Yarn 1, Bun). Not secret: they name the variables of `secretEnv`. */
  credentialLines: string;
  /** The values the npmrc lines name, for the install's environment. Secret. */
  secretEnv: Record<string, string>;
  /** Variables Yarn Berry reads instead of an npmrc. Secret. */
  yarnEnv: Record<string, string>;
}

/** The variables the npmrc's credential lines name (`${…}`, expanded by the package manager). */
export const TOKEN_VARIABLE = 'RBP_NPM_AUTH_TOKEN';
export const BASIC_VARIABLE = 'RBP_NPM_AUTH_BASIC';

/** localhost, 127.0.0.0/8 and ::1: a registry on the build machine itself. */
export function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * CC_NPM_REGISTRY is a host name (`npm.example.com`, `npm.example.com:8443/path`) or a URL. A host
 * name is reached over https, except a loopback host (localhost, 127.x.y.z, [::1]), which gets http:
 * such a registry runs next to the build and has no certificate. An explicit `http://` or
 * `https://` prefix always wins.
 */
export function registryUrl(setting: string | undefined): string {
  const v = setting?.trim();
  if (!v) return DEFAULT_REGISTRY;
  const explicit = /^[a-z][a-z0-9+.-]*:\/\//i.test(v);
  let u: URL;
  try {
    u = new URL(explicit ? v : `https://${v}`);
    if (!explicit && isLoopback(u.hostname)) u = new URL(`http://${v}`);
  } catch {
    throw badRegistry(v);
  }
  if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.username || u.password || !u.hostname) throw badRegistry(v.replace(/\/\/[^@/]*@/, '//***@'));
  return `${u.origin}${u.pathname.replace(/\/*$/, '/')}`;
}

function badRegistry(v: string): UserError {
  return new UserError({
    id: 'config/CC_NPM_REGISTRY/invalid',
    title: 'CC_NPM_REGISTRY is not a registry host',
    seen: { what: 'CC_NPM_REGISTRY', value: v, where: 'the application environment' },
    rule: 'CC_NPM_REGISTRY is the host name of an npm registry (npm.example.com, reached over https; a loopback host over http), or its http(s) URL, without credentials.',
    fix: 'Set CC_NPM_REGISTRY to the host, and put the credentials in NPM_TOKEN or CC_NPM_BASIC_AUTH.',
  });
}

/** `https://npm.example.com:8443/path/` → `//npm.example.com:8443/path/`, the key npm scopes credentials with. */
export function nerfDart(registry: string): string {
  const u = new URL(registry);
  return `//${u.host}${u.pathname}`;
}

export function registryAuth(env: Record<string, string | undefined>): RegistryAuth {
  const token = raw(env, 'NPM_TOKEN');
  const basic = raw(env, 'CC_NPM_BASIC_AUTH');
  if (token && basic) {
    throw new UserError({
      id: 'node/registry/both-auth',
      title: 'NPM_TOKEN and CC_NPM_BASIC_AUTH are both set',
      seen: { what: 'NPM_TOKEN, CC_NPM_BASIC_AUTH', value: '***', where: 'the application environment' },
      rule: 'The registry is authenticated by NPM_TOKEN (a token) or by CC_NPM_BASIC_AUTH (user:password), not both.',
      fix: 'Unset one of them: keep NPM_TOKEN for token authentication, or CC_NPM_BASIC_AUTH for basic authentication.',
    });
  }
  if (basic !== undefined && !/^[^:]+:.+$/s.test(basic)) {
    throw new UserError({
      id: 'config/CC_NPM_BASIC_AUTH/invalid',
      title: 'CC_NPM_BASIC_AUTH is not user:password',
      seen: { what: 'CC_NPM_BASIC_AUTH', value: '***', where: 'the application environment' },
      rule: 'CC_NPM_BASIC_AUTH is <user>:<password>, in clear: the buildpack Base64-encodes it.',
      fix: 'Set CC_NPM_BASIC_AUTH=<user>:<password>.',
    });
  }
  const registry = registryUrl(value(env, 'CC_NPM_REGISTRY'));
  const key = nerfDart(registry);
  const custom = registry !== DEFAULT_REGISTRY;
  const base = { registry, registryLines: custom ? `registry=${registry}\n` : '' };
  const server = { YARN_NPM_REGISTRY_SERVER: registry.replace(/\/$/, '') };
  if (token) {
    const yarnEnv = { ...server, YARN_NPM_AUTH_TOKEN: token, YARN_NPM_ALWAYS_AUTH: 'true' };
    return { ...base, kind: 'token', credentialLines: `${key}:_authToken=\${${TOKEN_VARIABLE}}\n`, secretEnv: { [TOKEN_VARIABLE]: token }, yarnEnv };
  }
  if (basic) {
    const credentialLines = `${key}:_auth=\${${BASIC_VARIABLE}}\n${key}:always-auth=true\n`;
    const yarnEnv = { ...server, YARN_NPM_AUTH_IDENT: basic, YARN_NPM_ALWAYS_AUTH: 'true' };
    return { ...base, kind: 'basic', credentialLines, secretEnv: { [BASIC_VARIABLE]: Buffer.from(basic, 'utf8').toString('base64') }, yarnEnv };
  }
  return { ...base, kind: 'none', credentialLines: '', secretEnv: {}, yarnEnv: custom ? server : {} };
}

export interface AuthTarget {
  credentialsIn: CredentialsIn;
  /** The user-level npmrc of the install (`npm_config_userconfig`); needed for 'user-npmrc'. */
  userconfig?: string;
}

/**
 * Runs `fn` with the registry configuration in place: `registry=` in the app's `.npmrc` (after the
 * project's own lines, so that it wins), the credential lines where `target` says, then puts
 * everything back. `fn` gets the environment the install needs: the values the npmrc lines name,
 * or Yarn Berry's own variables. The project's entry is never written through: it is renamed aside
 * and a new file of ours (0600, O_EXCL|O_NOFOLLOW) takes its place, so a `.npmrc` linked to a file
 * outside the app never receives our lines (a symlink's lines are kept when it points inside the app).
 */
export async function withRegistryAuth<T>(
  appDir: string,
  auth: RegistryAuth,
  fn: (env: Record<string, string>) => Promise<T>,
  target: AuthTarget = { credentialsIn: 'project-npmrc' },
): Promise<T> {
  if (target.credentialsIn === 'environment') return fn(auth.yarnEnv);
  const inUser = target.credentialsIn === 'user-npmrc' && auth.credentialLines !== '';
  if (inUser) {
    if (!target.userconfig) throw new Error('withRegistryAuth: a user-level npmrc is needed for these credentials');
    fs.appendFileSync(target.userconfig, auth.credentialLines, { mode: 0o600 });
  }
  const project = auth.registryLines + (inUser ? '' : auth.credentialLines);
  if (!project) return fn(auth.secretEnv);
  const file = path.join(appDir, '.npmrc');
  const aside = path.join(appDir, `.npmrc.rbp-project-${process.pid}`);
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  let own: string | undefined;
  if (st?.isFile()) own = fs.readFileSync(file, 'utf8');
  else if (st?.isSymbolicLink()) {
    try {
      const real = fs.realpathSync(file);
      const rel = path.relative(fs.realpathSync(appDir), real);
      if (!rel.startsWith('..') && !path.isAbsolute(rel) && fs.statSync(real).isFile()) own = fs.readFileSync(real, 'utf8');
    } catch {
      // dangling: nothing of it to keep
    }
  }
  if (st) fs.renameSync(file, aside);
  try {
    const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
    try {
      fs.writeFileSync(fd, `${own ? own.replace(/\n?$/, '\n') : ''}${project}`);
    } finally {
      fs.closeSync(fd);
    }
    return await fn(auth.secretEnv);
  } finally {
    fs.rmSync(file, { force: true });
    if (st) fs.renameSync(aside, file);
  }
}

/** What package managers print when a registry answers 401/403 or wants credentials it did not get. */
const REFUSED = /\bE40[13]\b|\bENEEDAUTH\b|ERR_PNPM_FETCH_40[13]|\b40[13]\b[^\n]*\b(Unauthorized|Forbidden)\b|authorization required/i;

export function registryRefused(output: string): boolean {
  return REFUSED.test(output);
}

/** The error when an install failed because the registry refused the request (or wanted credentials). */
export function registryRefusedError(auth: RegistryAuth, env: Record<string, string | undefined>, command: string): UserError {
  const host = new URL(auth.registry).host;
  const source = isSet(env, 'CC_NPM_REGISTRY') ? 'CC_NPM_REGISTRY' : 'the default registry';
  const sent = {
    token: 'NPM_TOKEN was sent',
    basic: 'CC_NPM_BASIC_AUTH was sent',
    none: 'no credentials were sent (NPM_TOKEN and CC_NPM_BASIC_AUTH are unset)',
  }[auth.kind];
  return new UserError({
    id: 'node/registry/refused',
    title: `The registry ${host} refused to serve the dependencies: ${sent}`,
    seen: { what: 'registry', value: auth.registry, where: source },
    rule: 'A private registry is reached with NPM_TOKEN (a token, written as //<host>/:_authToken) or CC_NPM_BASIC_AUTH (<user>:<password>), not both; CC_NPM_REGISTRY names its host.',
    fix:
      auth.kind === 'none'
        ? `Set NPM_TOKEN (or CC_NPM_BASIC_AUTH=<user>:<password>) on the application to credentials that may read from ${host}, and deploy again.`
        : `Check that ${auth.kind === 'token' ? 'NPM_TOKEN' : 'CC_NPM_BASIC_AUTH'} is valid for ${host} and may read the packages, and that CC_NPM_REGISTRY names the right host.`,
    details: [`command: ${command}`],
  });
}
