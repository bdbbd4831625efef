/**
 * What the build checks of the request flow, so mistakes fail the build rather than the launch:
 * CC_REQUEST_FLOW names only known, active middlewares, and the cache proxy's VCL compiles with
 * Varnish's own compiler. installLaunch calls it, so every runtime's build does.
 */
import { Logger } from '../../log.ts';
import { activeMiddlewares, cacheVcl } from './activation.ts';
import { planChain } from './chain.ts';
import { checkVcl } from './vcl.ts';

export function checkRequestFlowAtBuild(appDir: string, env: NodeJS.ProcessEnv, log: Logger = new Logger()): void {
  const chain = planChain(env, appDir);
  if (chain.block) log.info('Request flow: public access blocked (CC_REQUEST_FLOW=block)');
  else if (chain.middlewares.length) log.info(`Request flow: public port → ${chain.middlewares.join(' → ')} → app`);
  const vcl = activeMiddlewares(env, appDir).has('cache') ? cacheVcl(env, appDir) : undefined;
  if (vcl) checkVcl(vcl, log, env);
}
