/**
 * The launch entrypoint: runs under the installed Node.js (its layer's bin/ is on the launch PATH).
 * Plans the start command from what the build decided and the run-time environment, runs prestart
 * before and poststart after the start script, as npm would.
 */
import { raw } from '../../../lib/config/read.ts';
import { spawnSync } from 'node:child_process';
import { readDecision, runLaunch } from '../../../lib/launch/entry.ts';
import { envWithoutOthersSecrets } from '../../../lib/launch/request-flow/middlewares.ts';
import { planLaunch, type NodeDecision, type NodePlan } from './launch-plan.ts';
import type { LaunchContext } from '../../../lib/launch/context.ts';
import { readPackageJson } from './package-json.ts';

// Node.js apps read PORT (contract, node rule 1): the runtime has no port variable of its own.
runLaunch({ plan: (ctx) => launchPlan(ctx) });

function launchPlan(ctx: LaunchContext): NodePlan {
  const { env } = ctx;
  const plan = planLaunch({ ctx, pkg: readPackageJson(ctx.appDir) ?? {}, decision: readDecision<NodeDecision>() });
  if (raw(env, 'RBP_DRY_RUN') === '1') return plan;
  // The hooks are the app's own scripts: like the app, they never see the middlewares' secrets.
  const hookEnv = (event: string) => envWithoutOthersSecrets({ ...process.env, PORT: ctx.port, ...plan.env, npm_lifecycle_event: event });
  if (plan.hooks.prestart) {
    const r = spawnSync('/bin/sh', ['-c', plan.hooks.prestart], { stdio: 'inherit', cwd: plan.cwd, env: hookEnv('prestart') });
    if (r.status !== 0) {
      process.stderr.write(`launch: the prestart script failed (exit ${r.status ?? r.signal}): ${plan.hooks.prestart}\n`);
      process.exit(r.status || 1);
    }
  }
  const poststart = plan.hooks.poststart;
  if (poststart) process.on('exit', () => spawnSync('/bin/sh', ['-c', poststart], { stdio: 'inherit', cwd: plan.cwd, env: hookEnv('poststart') }));
  return plan;
}
