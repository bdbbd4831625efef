/**
 * The OUTs rbp built on this machine, wherever they are: one small record per OUT in
 * `<rbp cache>/outs/<hash>.json` (written when a build commits, one file each, so builds at once
 * never share a file), for `rbp prune` to find their caches and leftovers.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { rbpCacheHome } from './rbp-dirs.ts';

export interface OutRecord {
  out: string;
  app: string;
  /** The cache folder the build used. */
  cache: string;
  /** Whether the cache is the default one beside OUT (<OUT>.rbp-cache), rbp's to remove with OUT. */
  cacheBeside: boolean;
  built: string;
}

const dirOf = (env: NodeJS.ProcessEnv) => path.join(rbpCacheHome(env), 'outs');
/** The record of OUT. */
export const outRecordFile = (out: string, env: NodeJS.ProcessEnv = process.env) =>
  path.join(dirOf(env), `${crypto.createHash('sha256').update(path.resolve(out)).digest('hex').slice(0, 16)}.json`);

/** Records a build; a record that cannot be written costs only prune's knowledge of it. */
export function recordOut(r: OutRecord, env: NodeJS.ProcessEnv = process.env): void {
  const file = outRecordFile(r.out, env);
  const tmp = `${file}.${process.pid}`;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(tmp, `${JSON.stringify(r, null, 2)}\n`);
    fs.renameSync(tmp, file);
  } catch {
    fs.rmSync(tmp, { force: true });
  }
}

export function knownOuts(env: NodeJS.ProcessEnv = process.env): OutRecord[] {
  let names: string[];
  try {
    names = fs.readdirSync(dirOf(env)).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  return names.flatMap((n) => {
    try {
      const r = JSON.parse(fs.readFileSync(path.join(dirOf(env), n), 'utf8')) as OutRecord;
      return typeof r.out === 'string' && typeof r.cache === 'string' ? [r] : [];
    } catch {
      return [];
    }
  });
}

export const forgetOut = (out: string, env: NodeJS.ProcessEnv = process.env) => fs.rmSync(outRecordFile(out, env), { force: true });
