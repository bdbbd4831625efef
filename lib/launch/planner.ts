/**
 * The planner: the Node.js end of the launch, plan.cjs in the launcher layer (each buildpack's
 * src/launch.ts bundled). sh/rbp-launch.sh runs it and reads what it prints: the launch plan as data
 * (plan-data.ts), which the sh carries out; with RBP_DRY_RUN=1 (`rbp run --dry-run`) the plan as JSON
 * instead. It starts nothing. Before it hands a request flow over it checks that the flow's ports are
 * free and writes the files its processes need (the cache proxy's folder). A user error is printed
 * as one block, without a stack trace, and ends the launch.
 */
import path from 'node:path';
import { raw } from '../config/read.ts';
import { exitCodeFor } from '../cnb/exit.ts';
import { isUserError, renderUserError } from '../errors.ts';
import { launcherLayer } from './decision.ts';
import { planData } from './plan-data.ts';
import { planJson, planLaunch, type RuntimeLaunch } from './plan.ts';
import { checkFlowPortsFree } from './request-flow/plan.ts';

/**
 * Plans the launch of `runtime` and prints it. `runtime` is called inside the error handling: a
 * runtime that reads the build's decision (decision.ts) fails there as a user error.
 */
export async function runPlanner(runtime: () => RuntimeLaunch): Promise<void> {
  const env = process.env;
  try {
    const plan = await planLaunch(runtime(), env, process.cwd(), path.dirname(launcherLayer()));
    if (raw(env, 'RBP_DRY_RUN') === '1') {
      process.stdout.write(`${JSON.stringify(planJson(plan, env), null, 2)}\n`);
      return;
    }
    // A busy port of the flow is reported before anything starts (rbp run and rbp deploy check the public port themselves).
    if (plan.requestFlow) await checkFlowPortsFree(plan.requestFlow);
    const made = (plan.requestFlow?.middlewares ?? []).flatMap((m) => (m.prepare ? [m.prepare()] : []));
    process.stdout.write(`${planData(plan, undefined, made).join('\n')}\n`);
  } catch (e) {
    process.stderr.write(`${isUserError(e) ? renderUserError(e.data) : e instanceof Error ? e.stack : String(e)}\n`);
    process.exitCode = exitCodeFor(e, 'entrypoint');
  }
}
