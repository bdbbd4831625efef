/** `rbp prune [--dry-run] [--caches] [--json]`: the plan of prune.ts, shown, then carried out. */
import { formatBytes } from '../../log.ts';
import { writeJson } from '../cli-json.ts';
import { applyPrune, describeItem, planPrune } from '../prune.ts';
import { noPositionals, type Handler } from './context.ts';

export const run: Handler = (ctx) => {
  noPositionals(ctx);
  const { log } = ctx;
  const dryRun = Boolean(ctx.values['dry-run']);
  log.section(dryRun ? 'Prune (dry run: nothing is removed)' : 'Prune');
  const plan = planPrune({ caches: Boolean(ctx.values.caches) });
  for (const out of plan.recover)
    log.info(`${out}: an interrupted build left it incomplete; ${dryRun ? 'rbp prune would put' : 'putting'} its previous build back`);
  for (const k of plan.kept) log.info(`keeping ${k.path}: ${k.why}`);
  for (const i of plan.remove) log.info(`${dryRun ? 'would remove' : 'removing'} ${describeItem(i)}`);
  const problems = dryRun ? [] : applyPrune(plan);
  for (const p of problems) log.warn(`could not remove ${p}`);
  const total = formatBytes(plan.freed);
  if (!plan.remove.length) log.info('nothing to remove');
  else log.info(dryRun ? `would free ${total} (run rbp prune without --dry-run to remove them)` : `freed ${total}`);
  if (ctx.values.json) {
    writeJson(ctx.streams.stdout, {
      dryRun,
      freed: plan.freed,
      removed: plan.remove.map((i) => ({ path: i.path, kind: i.kind, why: i.why, bytes: i.bytes })),
      kept: plan.kept,
      recovered: plan.recover,
      problems,
    });
  }
  return Promise.resolve(problems.length ? 1 : 0);
};
