/** `rbp prune`: what rbp left behind, removed (cli-prune.ts). */
import { noPositionals, type Handler } from './context.ts';

export const run: Handler = async (ctx) => {
  noPositionals(ctx);
  const { prune } = await import('../cli-prune.ts');
  return prune({
    dryRun: Boolean(ctx.values['dry-run']),
    caches: Boolean(ctx.values.caches),
    json: Boolean(ctx.values.json),
    log: ctx.log,
    stdout: ctx.streams.stdout,
  });
};
