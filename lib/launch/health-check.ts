/**
 * The deployment health check's paths (contract, "Deployment health check"): part of the launch plan
 * (plan.ts), checked by the platform (lib/platform/health.ts) through the public port.
 */
import { read, readFamily } from '../config/read.ts';

/**
 * `CC_HEALTH_CHECK_PATH`, then `CC_HEALTH_CHECK_PATH_<n>` in order of n, each as a request target
 * (lib/config: a missing leading / added, spaces percent-encoded); `/` when none is set.
 */
export function healthCheckPaths(env: Record<string, string | undefined>): string[] {
  const one = read(env, 'CC_HEALTH_CHECK_PATH');
  const paths = [...(one?.source === 'env' ? [one.value] : []), ...readFamily(env, 'CC_HEALTH_CHECK_PATH_<n>').map((p) => p.value)];
  return paths.length ? [...new Set(paths)] : ['/'];
}
