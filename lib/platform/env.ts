/**
 * The environment a buildpack process gets (cnb-spec.md §1, lifecycle env/build.go): rbp's own
 * environment filtered to an include-list, earlier buildpacks' build layers, the user's platform
 * variables (PATH-like ones prepended), then the operator's RBP_* configuration, then CNB_*.
 */
import { POSIX_PATH_VARS, type EnvMap } from '../cnb/env.ts';

/**
 * The lifecycle's include-list, plus the machine's CA trust settings: they go with the proxy
 * variables (a build behind a TLS-intercepting proxy reaches no registry without them).
 */
export const TRUST_VARS = ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR'] as const;
const PROXY_VARS = ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'NO_PROXY', 'no_proxy'];
const BUILD_INCLUDE = ['HOME', 'HOSTNAME', ...PROXY_VARS, 'CNB_STACK_ID', ...POSIX_PATH_VARS, ...TRUST_VARS];

/** Variables of rbp's own environment handed to every buildpack and app as operator configuration. */
export function operatorEnv(host: NodeJS.ProcessEnv = process.env): EnvMap {
  const out: EnvMap = {};
  for (const [k, v] of Object.entries(host)) if (k.startsWith('RBP_') && v !== undefined) out[k] = v;
  return out;
}

export function filteredHostEnv(host: NodeJS.ProcessEnv = process.env, include: readonly string[] = BUILD_INCLUDE): EnvMap {
  const out: EnvMap = {};
  for (const k of include) if (host[k] !== undefined) out[k] = host[k]!;
  return out;
}

/** Puts user (platform) variables on top of `env`: PATH-like ones are prepended, others override. */
export function withPlatformVars(env: EnvMap, user: EnvMap): EnvMap {
  const out = { ...env };
  for (const [k, v] of Object.entries(user)) {
    if ((POSIX_PATH_VARS as readonly string[]).includes(k) && out[k]) out[k] = `${v}:${out[k]}`;
    else out[k] = v;
  }
  return out;
}

export function buildProcessEnv(opts: { base: EnvMap; user: EnvMap; clearEnv: boolean; operator: EnvMap; cnb: EnvMap }): EnvMap {
  const env = opts.clearEnv ? { ...opts.base } : withPlatformVars(opts.base, opts.user);
  Object.assign(env, opts.operator, opts.cnb);
  return env;
}
