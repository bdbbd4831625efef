/**
 * The Caddyfile (contract, `static` rule 5): `./Caddyfile`, or the file CC_STATIC_CADDYFILE names.
 * A Caddyfile is used only when Caddy's own validation accepts it; an invalid one is reported with
 * Caddy's message and the site is served without it. A file CC_STATIC_CADDYFILE names explicitly
 * must exist.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { finished } from '../../../lib/child-result.ts';
import { UserError } from '../../../lib/errors.ts';
import { DEFAULT_CADDYFILE, type StaticConfig } from './config.ts';
import { resolveSettingPath } from '../../../lib/config/read.ts';
import type { RootPath } from './paths.ts';
import { statIfAny } from '../../../lib/fsx.ts';

export interface CaddyfileRef extends RootPath {
  /** Named by CC_STATIC_CADDYFILE. */
  explicit: boolean;
}

export function locateCaddyfile(cfg: StaticConfig, appDir: string): CaddyfileRef | undefined {
  if (cfg.caddyfile) {
    if (!statIfAny(cfg.caddyfile.abs)?.isFile()) {
      throw new UserError({
        id: 'config/CC_STATIC_CADDYFILE/invalid',
        title: 'The Caddyfile named by CC_STATIC_CADDYFILE does not exist',
        seen: { what: 'CC_STATIC_CADDYFILE', value: `/${cfg.caddyfile.rel}`, where: 'the application environment' },
        rule: 'CC_STATIC_CADDYFILE is the path of a Caddyfile in the project, relative to its root',
        fix: `add the file at /${cfg.caddyfile.rel}, fix the path, or remove CC_STATIC_CADDYFILE`,
      });
    }
    return { ...cfg.caddyfile, explicit: true };
  }
  // ./Caddyfile is the app's own only when it stays inside the app, symlinks followed: Caddy's
  // validation errors quote the file, so a link to a file outside would print it into the log.
  if (!fs.lstatSync(path.join(appDir, DEFAULT_CADDYFILE), { throwIfNoEntry: false })) return undefined;
  const abs = resolveSettingPath(appDir, 'CC_STATIC_CADDYFILE', DEFAULT_CADDYFILE, 'default').abs;
  return statIfAny(abs)?.isFile() ? { rel: DEFAULT_CADDYFILE, abs, explicit: false } : undefined;
}

export type Validation = { valid: true } | { valid: false; message: string };

/**
 * `caddy validate --adapter caddyfile` (loads and provisions the config without serving). `{$PORT}`
 * is substituted when the file is adapted, so it is given the port the server will have. Caddy's
 * data and config folders point at a temporary one: validation must leave nothing behind.
 */
export async function validateCaddyfile(caddy: string, file: string, port: number, env: Record<string, string | undefined>): Promise<Validation> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-caddy-validate-'));
  try {
    const r = await execa(caddy, ['validate', '--config', file, '--adapter', 'caddyfile'], {
      cwd: path.dirname(file),
      env: { PATH: env.PATH ?? '', PORT: String(port), HOME: home, XDG_DATA_HOME: home, XDG_CONFIG_HOME: home },
      extendEnv: false,
      reject: false,
      all: true,
      stdin: 'ignore',
      timeout: 60_000,
    });
    if (r.exitCode === 0) return { valid: true };
    return { valid: false, message: caddyMessage(finished(r).all ?? r.shortMessage ?? '') };
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/** Caddy logs JSON lines, then `Error: …`: that line is the message; else the last line. */
export function caddyMessage(output: string): string {
  const lines = output
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.find((l) => l.startsWith('Error:')) ?? lines.at(-1) ?? 'caddy validate failed without a message';
}
