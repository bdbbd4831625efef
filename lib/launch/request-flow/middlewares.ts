/**
 * The command line, environment and failure status of each middleware.
 *
 * - custom: CC_REQUEST_FLOW_CUSTOM with @@LISTEN_PORT@@ and @@FORWARD_PORT@@ replaced, run by /bin/sh
 *   (which execs a simple command: lib/launch/exec.ts).
 * - cache: Varnish in the foreground with the project's VCL, its backend the next hop (vcl.ts).
 * - redirector, accessproxy: programs the operator provides; their command templates take the same
 *   placeholders and are set by RBP_REDIRECTOR_COMMAND and RBP_ACCESSPROXY_COMMAND.
 * - block (CC_REQUEST_FLOW=block): a small Node.js HTTP server, on the planner's own Node.js, that
 *   answers 403 on the public port while the app runs behind it.
 * Each secret reaches only its own middleware, through the environment, never a command line: the
 * launch unsets the others' secrets for each member (plan-data.ts).
 */
import { raw } from '../../config/read.ts';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { redactUrl, UserError } from '../../errors.ts';
import { shellCommand } from '../exec.ts';
import { instanceMemory } from '../instance.ts';
import { cacheVcl, MIDDLEWARE_SECRETS, type MiddlewareKind } from './activation.ts';
import { findVarnishd, prepareVarnishDir, varnishDirFiles, wrapperVcl } from './vcl.ts';

export const LISTEN_PLACEHOLDER = '@@LISTEN_PORT@@';
export const FORWARD_PLACEHOLDER = '@@FORWARD_PORT@@';

/** Operator programs: the variable holding the template, and its default. */
const OPERATOR_TEMPLATES: Record<'redirector' | 'accessproxy', { variable: string; default: string }> = {
  redirector: {
    variable: 'RBP_REDIRECTOR_COMMAND',
    default: 'redirectionio-agent --listen 0.0.0.0:@@LISTEN_PORT@@ --forward http://127.0.0.1:@@FORWARD_PORT@@',
  },
  accessproxy: {
    variable: 'RBP_ACCESSPROXY_COMMAND',
    default: 'accessproxy --listen 0.0.0.0:@@LISTEN_PORT@@ --upstream http://127.0.0.1:@@FORWARD_PORT@@',
  },
};

/**
 * The launcher's exit status when a member of the chain fails (exits, or never listens), so the
 * status alone says which one failed. The app's own failure gives the app's own status.
 */
export const FAILURE_STATUS: Record<MiddlewareKind | 'block', number> = {
  accessproxy: 91,
  redirector: 92,
  cache: 93,
  custom: 94,
  block: 95,
};
/** The app did not listen on its port in time. */
export const APP_NOT_LISTENING_STATUS = 96;

export const LABEL: Record<MiddlewareKind | 'block', string> = {
  accessproxy: 'access proxy',
  redirector: 'redirection proxy',
  cache: 'cache proxy',
  custom: 'custom middleware',
  block: 'public access block',
};

export interface MiddlewareSpec {
  kind: MiddlewareKind | 'block';
  argv: string[];
  cwd: string;
  listen: number;
  /** The next hop; the block forwards nothing. */
  forward?: number;
  /** What the log and the dry run show for the command (ports filled, URL credentials hidden). */
  shown: string;
  /** The secrets (by name) this middleware receives. */
  secrets: string[];
  /** Extra facts for the dry run (the generated VCL). */
  facts?: Record<string, unknown>;
  /** Writes the files it needs (not for a dry run); returns the folder to remove when the launch ends. */
  prepare?: () => string;
}

export function fillPorts(template: string, listen: number, forward: number): string {
  return template.replaceAll(LISTEN_PLACEHOLDER, String(listen)).replaceAll(FORWARD_PLACEHOLDER, String(forward));
}

function secretsOf(kind: MiddlewareKind, env: NodeJS.ProcessEnv): string[] {
  return Object.keys(MIDDLEWARE_SECRETS).filter((k) => MIDDLEWARE_SECRETS[k] === kind && env[k] !== undefined);
}

/** The 403 server of CC_REQUEST_FLOW=block, run with `node -e` and its port. */
const BLOCK_SERVER = `const port = Number(process.argv[1]);
require('node:http').createServer((req, res) => {
  res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' });
  res.end('Forbidden: public access to this application is blocked.\\n');
}).listen(port);`;

/** CC_REQUEST_FLOW=block: the public port answers 403, on the Node.js that plans the launch. */
export function blockSpec(listen: number, appDir: string): MiddlewareSpec {
  return {
    kind: 'block',
    argv: [process.execPath, '-e', BLOCK_SERVER, String(listen)],
    cwd: appDir,
    listen,
    shown: `403 to every request on port ${listen}`,
    secrets: [],
    facts: { answers: 403 },
  };
}

/** Varnish's storage: RBP_VARNISH_STORAGE, else an eighth of the instance memory, 16 MiB to 1 GiB. */
export function varnishStorage(env: NodeJS.ProcessEnv): string {
  const storage = raw(env, 'RBP_VARNISH_STORAGE');
  if (storage) return storage;
  const memory = instanceMemory(env) ?? 2 ** 30;
  const mib = Math.min(1024, Math.max(16, Math.floor(memory / 8 / 2 ** 20)));
  return `malloc,${mib}m`;
}

export interface HopPorts {
  listen: number;
  forward: number;
  /** The hop listening on the public port binds all interfaces; inner hops bind loopback. */
  isPublic: boolean;
}

export function middlewareSpec(kind: MiddlewareKind, hop: HopPorts, env: NodeJS.ProcessEnv, appDir: string): MiddlewareSpec {
  const { listen, forward } = hop;
  const common = { kind, cwd: appDir, listen, forward, secrets: secretsOf(kind, env) };
  if (kind === 'cache') return cacheSpec(common, hop, env, appDir);
  const template = kind === 'custom' ? (raw(env, 'CC_REQUEST_FLOW_CUSTOM') ?? '') : env[OPERATOR_TEMPLATES[kind].variable] || OPERATOR_TEMPLATES[kind].default;
  const cmd = fillPorts(template, listen, forward);
  return { ...common, argv: shellCommand(cmd), shown: redactUrl(cmd) };
}

function cacheSpec(common: Omit<MiddlewareSpec, 'argv' | 'shown'>, hop: HopPorts, env: NodeJS.ProcessEnv, appDir: string): MiddlewareSpec {
  const vcl = cacheVcl(env, appDir)!;
  const varnishd = findVarnishd(env);
  if (!varnishd) {
    throw new UserError({
      id: 'request-flow/cache/varnishd-missing',
      title: 'The cache proxy needs Varnish, which is not installed',
      seen: { what: vcl.source, value: vcl.shown },
      rule: 'The cache proxy is Varnish (varnishd) run with the project VCL; it must be installed where the app runs.',
      fix: 'Install Varnish (Debian: apt-get install varnish), or set RBP_TOOL_VARNISHD to its path.',
    });
  }
  // One directory per varnishd: its state (-n), the generated VCL and a copy of the project's.
  // A fresh name no one can guess; prepareVarnishDir creates it exclusively, so it is never reused.
  const dir = path.join(os.tmpdir(), `rbp-varnish-${crypto.randomBytes(8).toString('hex')}`);
  const { wrapper, state, copy } = varnishDirFiles(dir);
  const address = hop.isPublic ? `:${hop.listen}` : `127.0.0.1:${hop.listen}`;
  const argv = [varnishd, '-F', '-a', address, '-f', wrapper, '-s', varnishStorage(env), '-n', state, '-T', 'none'];
  return {
    ...common,
    argv,
    shown: argv.join(' '),
    facts: { vcl: vcl.shown, generatedVcl: wrapperVcl(copy, hop.forward) },
    prepare: () => (prepareVarnishDir(dir, vcl, hop.forward), dir),
  };
}
