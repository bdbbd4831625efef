/** `rbp prune [--dry-run] [--caches] [--json]`: the plan of prune.ts, shown, then carried out. */
import type { Writable } from 'node:stream';
import { formatBytes, type Logger } from '../log.ts';
import { writeJson } from './cli-json.ts';
import { applyPrune, describeItem, planPrune } from './prune.ts';

export function prune(o: { dryRun: boolean; caches: boolean; json: boolean; log: Logger; stdout: Writable }): number {
  const { log } = o;
  log.section(o.dryRun ? 'Prune (dry run: nothing is removed)' : 'Prune');
  const plan = planPrune({ caches: o.caches });
  for (const out of plan.recover)
    log.info(`${out}: an interrupted build left it incomplete; ${o.dryRun ? 'rbp prune would put' : 'putting'} its previous build back`);
  for (const k of plan.kept) log.info(`keeping ${k.path}: ${k.why}`);
  for (const i of plan.remove) log.info(`${o.dryRun ? 'would remove' : 'removing'} ${describeItem(i)}`);
  const problems = o.dryRun ? [] : applyPrune(plan);
  for (const p of problems) log.warn(`could not remove ${p}`);
  const total = formatBytes(plan.freed);
  if (!plan.remove.length) log.info('nothing to remove');
  else log.info(o.dryRun ? `would free ${total} (run rbp prune without --dry-run to remove them)` : `freed ${total}`);
  if (o.json) {
    writeJson(o.stdout, {
      dryRun: o.dryRun,
      freed: plan.freed,
      removed: plan.remove.map((i) => ({ path: i.path, kind: i.kind, why: i.why, bytes: i.bytes })),
      kept: plan.kept,
      recovered: plan.recover,
      problems,
    });
  }
  return problems.length ? 1 : 0;
}
