/** `rbp run OUT`: the built app's process, as the lifecycle's launcher starts it (or its plan, --dry-run). */
import fs from 'node:fs';
import path from 'node:path';
import { EXIT } from '../../cnb/exit.ts';
import { UserError } from '../../errors.ts';
import { DEFAULT_INSTANCE, INSTANCE_SIZES, parseInstance, parseMemory } from '../../launch/instance.ts';
import { RESTART_VARIABLE, restartPolicy } from '../../launch/restart.ts';
import type { Logger } from '../../log.ts';
import { collectEnv } from '../cli-env.ts';
import { writeJson } from '../cli-json.ts';
import { closeChannel, handoffChannel, handoffProblem, handOver } from '../handoff.ts';
import { markInUse } from '../in-use.ts';
import { rbpInfoPath, readRbpInfo } from '../metadata.ts';
import { lockHolder } from '../out-lock.ts';
import { recover } from '../out-recover.ts';
import { list, one, parsePort, str, usage, type Handler } from './context.ts';

export const run: Handler = async (ctx) => {
  const { log, streams, values } = ctx;
  const out = one(ctx, 'OUT directory');
  // A build killed with SIGKILL: its buildpack is stopped, and the OUT it left incomplete is made whole again.
  const recovered = recover(out);
  if (recovered) log.warn(recovered);
  const builder = lockHolder(out);
  if (builder !== undefined && !fs.existsSync(rbpInfoPath(path.resolve(out)))) {
    throw new UserError({
      id: 'platform/out/building',
      title: 'A build into OUT is running',
      seen: { what: 'OUT', value: out, where: `process ${builder}` },
      rule: 'rbp run starts the complete build OUT holds, and OUT holds none until this build ends.',
      fix: `Wait for process ${builder} to finish, then run again.`,
    });
  }
  const info = readRbpInfo(path.resolve(out));
  const instance = parseInstance(str(ctx, 'instance') ?? info?.instance ?? DEFAULT_INSTANCE);
  const memory = str(ctx, 'memory') ? parseMemory(str(ctx, 'memory')!) : INSTANCE_SIZES[instance]!;
  const restart = restartPolicy(str(ctx, 'restart') ?? 'no', '--restart');
  const userEnv = collectEnv(list(ctx, 'env-file'), list(ctx, 'env'));
  const { checkListenPort, dryRun, execInstead, planLaunch, start } = await import('../launcher.ts');
  const plan = planLaunch({
    outDir: out,
    processType: str(ctx, 'process'),
    port: parsePort(str(ctx, 'port')),
    userEnv,
    instance,
    memory,
    args: ctx.passthrough,
    dryRun: Boolean(values['dry-run']),
  });
  // Unset means no: a process that is not ours sees the environment the lifecycle would give it.
  if (restart !== 'no') plan.env[RESTART_VARIABLE] = restart;
  warnMissingBuildEnv(info?.['env-names'], userEnv, log);
  if (values['dry-run']) {
    writeJson(streams.stdout, dryRun(plan));
    return 0;
  }
  if (values.json) throw usage('--json goes with --dry-run: a running process prints its own output', ctx.command);
  await checkListenPort(plan, parsePort(str(ctx, 'port')));
  // rbp prune keeps an OUT a running app uses (the mark stays true across execve: same pid).
  const wrapper = handoffChannel();
  markInUse(out, wrapper);
  if (wrapper !== undefined) {
    // Under dist/rbp, its sh takes the process over (handoff.ts) and rbp.js ends; not execve, even
    // where Node.js has it: the process would have rbp.js's pid, with the sh waiting above it.
    if (!handoffProblem(plan)) return handOver(plan) === 'handed' ? 0 : EXIT.launchFailed;
    closeChannel();
  } else execInstead(plan);
  return await start(plan).exited;
};

/**
 * Variables given to `rbp build --env` that this run does not set: the app was built with them and
 * may need them at run time too. Names only: values may be secrets.
 */
function warnMissingBuildEnv(names: string[] | undefined, userEnv: Record<string, string>, log: Logger): void {
  const missing = (names ?? []).filter((n) => !(n in userEnv));
  if (missing.length)
    log.warn(`set at build (rbp build --env) but not for this run: ${missing.join(', ')}; give them again with --env NAME=VALUE if the app needs them`);
}
