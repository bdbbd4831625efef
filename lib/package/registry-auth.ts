/**
 * Registry credentials, found where pack (go-containerregistry's default keychain) and Docker find
 * them: `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`:
 *   credHelpers[registry]   a `docker-credential-<helper>` program asked with `get`
 *   credsStore              the same, for every registry
 *   auths[registry]         `auth` (base64 of user:password), or `username`/`password`, or `identitytoken`
 * A registry is matched by its host (Docker Hub also as https://index.docker.io/v1/). Credentials
 * are never logged: messages name the file and the registry only.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { UserError } from '../errors.ts';

export interface Credentials {
  username?: string;
  password?: string;
  /** An OAuth2 refresh token (`identitytoken`), exchanged for a registry token. */
  identityToken?: string;
}

export interface FoundCredentials {
  credentials?: Credentials;
  /** The config file read, for messages (whether or not it had an entry). */
  file: string;
  /** How they were found: `auths`, `credHelpers (ecr-login)`, … */
  source?: string;
}

/** The Docker config file pack reads. */
export function dockerConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.DOCKER_CONFIG || path.join(os.homedir(), '.docker'), 'config.json');
}

interface DockerConfig {
  auths?: Record<string, { auth?: string; username?: string; password?: string; identitytoken?: string }>;
  credHelpers?: Record<string, string>;
  credsStore?: string;
}

/** The keys a registry may be listed under in config.json. */
function keysFor(registry: string): string[] {
  const hub = registry === 'docker.io' || registry === 'index.docker.io' || registry === 'registry-1.docker.io';
  const hosts = hub ? ['https://index.docker.io/v1/', 'index.docker.io', 'docker.io', 'registry-1.docker.io'] : [registry];
  return hosts.flatMap((h) => (h.includes('://') ? [h] : [h, `https://${h}`, `http://${h}`, `https://${h}/v1/`, `https://${h}/v2/`]));
}

function configError(file: string, problem: string): UserError {
  return new UserError({
    id: 'platform/registry/config',
    title: 'Cannot read the Docker config file',
    seen: { what: 'DOCKER_CONFIG', value: file },
    rule: `Registry credentials are read from $DOCKER_CONFIG/config.json (else ~/.docker/config.json), the JSON file docker login and pack use; here ${problem}.`,
    fix: 'Fix the file (docker login rewrites it), or point DOCKER_CONFIG at a folder holding a valid config.json.',
  });
}

/** The credentials for `registry`, from the Docker config file; none when it has no entry. */
export async function findCredentials(registry: string, env: NodeJS.ProcessEnv = process.env): Promise<FoundCredentials> {
  const file = dockerConfigFile(env);
  let config: DockerConfig;
  try {
    config = JSON.parse(fs.readFileSync(file, 'utf8')) as DockerConfig;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { file };
    throw configError(file, e instanceof SyntaxError ? `it is not JSON (${e.message})` : (e as Error).message);
  }
  const keys = keysFor(registry);
  const helper = keys.map((k) => config.credHelpers?.[k]).find(Boolean) ?? config.credsStore;
  if (helper) {
    const fromHelper = await askHelper(helper, keys[0]!.includes('://') ? keys[0]! : registry, file);
    if (fromHelper) return { file, credentials: fromHelper, source: `credential helper docker-credential-${helper}` };
  }
  const entry = keys.map((k) => config.auths?.[k]).find(Boolean);
  if (!entry) return { file };
  if (entry.identitytoken) return { file, credentials: { identityToken: entry.identitytoken }, source: 'auths (identity token)' };
  if (entry.auth) {
    const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon === -1) throw configError(file, `the auth entry of ${registry} is not base64 of user:password`);
    return { file, credentials: { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) }, source: 'auths' };
  }
  if (entry.username !== undefined) return { file, credentials: { username: entry.username, password: entry.password ?? '' }, source: 'auths' };
  return { file };
}

/** `docker-credential-<helper> get`, given the server on stdin; none when it knows no credentials. */
async function askHelper(helper: string, server: string, file: string): Promise<Credentials | undefined> {
  const r = await execa(`docker-credential-${helper}`, ['get'], { input: server, reject: false, timeout: 30_000 });
  if (r.failed || r.exitCode !== 0) {
    // "credentials not found" is the protocol's answer for an unknown server; a missing helper is not.
    if ((r as { code?: string }).code === 'ENOENT') {
      throw new UserError({
        id: 'platform/registry/credential-helper',
        title: `The credential helper docker-credential-${helper} is not installed`,
        seen: { what: 'credential helper', value: `docker-credential-${helper}`, where: file },
        rule: 'A Docker config that names a credential helper (credsStore, credHelpers) needs that program on PATH.',
        fix: `Install docker-credential-${helper}, or remove it from the config file and log in with docker login.`,
      });
    }
    return undefined;
  }
  try {
    const out = JSON.parse(r.stdout) as { Username?: string; Secret?: string };
    if (!out.Secret) return undefined;
    return out.Username === '<token>' ? { identityToken: out.Secret } : { username: out.Username ?? '', password: out.Secret };
  } catch {
    return undefined;
  }
}
