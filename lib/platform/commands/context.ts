/**
 * What every command module of `rbp` (lib/platform/commands/*.ts) is given by cli.ts (its flags read,
 * the log set up), and the helpers they share.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { UserError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { orderFromGroups, resolveOrder, type Order } from '../order.ts';
import type { ProjectDescriptor } from '../project-descriptor.ts';
import { privateTemp, removeOnSignals } from '../temp.ts';

export interface Streams {
  stdout: Writable;
  stderr: Writable;
}

/** What a usage error says of the command (the table's entry, cli-commands.ts). */
export interface CommandInfo {
  name: string;
  synopsis: string;
}

export interface CommandContext {
  /** The command as the table declares it. */
  command: CommandInfo;
  /** Its name as typed (build and deploy share a module). */
  name: string;
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
  /** What follows `--`. */
  passthrough: string[];
  log: Logger;
  streams: Streams;
}

/** A command's handler: its exit code. */
export type Handler = (ctx: CommandContext) => Promise<number>;

export const str = (ctx: CommandContext, k: string): string | undefined => ctx.values[k] as string | undefined;
export const list = (ctx: CommandContext, k: string): string[] | undefined => ctx.values[k] as string[] | undefined;

/** A usage error of the command (or of rbp, before one is known). */
export function usage(msg: string, c: CommandInfo | undefined, all: readonly CommandInfo[] = []): UserError {
  return new UserError({
    id: 'platform/usage',
    title: msg,
    rule: c ? `Usage: ${c.synopsis}` : 'Usage: rbp COMMAND [flags], COMMAND one of ' + all.map((x) => x.name).join(', ') + '.',
    fix: c ? `See rbp ${c.name} --help for every flag.` : 'See rbp --help.',
  });
}

export function one(ctx: CommandContext, what: string): string {
  if (ctx.positionals.length !== 1) throw usage(`expected one ${what}, got ${ctx.positionals.length ? ctx.positionals.join(' ') : 'none'}`, ctx.command);
  return ctx.positionals[0]!;
}

export function noPositionals(ctx: CommandContext): void {
  if (ctx.positionals.length) throw usage(`rbp ${ctx.command.name} takes no positional argument, got ${ctx.positionals.join(' ')}`, ctx.command);
}

export function parsePort(v: string | undefined): number {
  if (v === undefined) return 8080;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535) {
    throw new UserError({
      id: 'platform/port/invalid',
      title: 'Invalid port',
      seen: { what: '--port', value: v },
      rule: 'A port is a whole number from 1 to 65535.',
      fix: 'Use for example --port 8080.',
    });
  }
  return n;
}

export function parseTimeout(v: string | undefined): number {
  if (v === undefined) return 60;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) {
    throw new UserError({
      id: 'platform/timeout/invalid',
      title: 'Invalid timeout',
      seen: { what: '--timeout', value: v },
      rule: 'The timeout is a number of seconds greater than 0.',
      fix: 'Use for example --timeout 120.',
    });
  }
  return n;
}

/** Which buildpacks: flags first, then project.toml's group, then our own in AUTO_ORDER. */
export async function orderOf(ctx: CommandContext, project: ProjectDescriptor | undefined): Promise<Order> {
  const [type, buildpack, order] = [str(ctx, 'type'), list(ctx, 'buildpack'), str(ctx, 'order')];
  if (!type && !buildpack?.length && !order && project?.group.length) {
    return await orderFromGroups([project.group], path.dirname(project.file), [], project.file);
  }
  return await resolveOrder({ type, buildpacks: buildpack, orderFile: order });
}

/** Runs `fn` in `dir` when given (made if needed), else in a private temporary folder removed after. */
export async function withScratch<T>(dir: string | undefined, prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  if (dir) {
    fs.mkdirSync(path.resolve(dir), { recursive: true });
    return fn(path.resolve(dir));
  }
  removeOnSignals();
  const tmp = privateTemp(prefix);
  try {
    return await fn(tmp.dir);
  } finally {
    tmp.remove();
  }
}
