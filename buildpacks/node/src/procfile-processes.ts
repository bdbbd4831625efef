/**
 * The build's part of the Procfile (procfile.ts): what it starts, its warnings, and its other
 * process types as processes of the image (`rbp run OUT --process worker`, the lifecycle's
 * `/cnb/process/worker`). Those run with /bin/sh -c, as Heroku runs Procfile commands, in the launch
 * environment with the app's node_modules/.bin first on PATH and NODE_ENV=production unless set.
 * A Procfile beside a start that wins over it (CC_RUN_COMMAND, scripts.start) is said to be unused.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ProcessDef } from '../../../lib/cnb/launch.ts';
import type { Layers } from '../../../lib/cnb/layers.ts';
import type { Logger } from '../../../lib/log.ts';
import type { StartMethod } from './package-json.ts';
import { readProcfile } from './procfile.ts';

export function procfileProcesses(appDir: string, start: StartMethod, log: Logger): ProcessDef[] {
  if (start.kind !== 'procfile' && !fs.existsSync(path.join(appDir, 'Procfile'))) return [];
  if (start.kind === 'run-command' || start.kind === 'start-script') {
    log.info(`Procfile is not used: ${start.kind === 'run-command' ? 'CC_RUN_COMMAND' : 'scripts.start'} starts the app, and comes first`);
    return [];
  }
  // With main starting the app (the Procfile has no web), the Procfile's other processes are still the app's.
  const procfile = start.kind === 'procfile' ? start.procfile : readProcfile(appDir);
  if (!procfile) return [];
  for (const w of procfile.warnings) log.warn(w);
  const rest = [...procfile.processes]
    .filter(([type]) => type !== 'web')
    .map(([type, command]) => ({ type, command: ['/bin/sh', '-c', command], args: [], default: false }));
  const more = rest.length ? `; other processes: ${rest.map((p) => p.type).join(', ')}` : '';
  log.info(start.kind === 'procfile' ? `Procfile: web starts the app: ${start.command}${more}` : `Procfile has no web: main starts the app${more}`);
  return rest;
}

/**
 * The Procfile's other processes' environment, as CNB per-process launch env files in the launcher
 * layer (`env.launch/<type>/`): node_modules/.bin first on PATH, NODE_ENV=production by default.
 */
export function writeProcfileEnv(layers: Layers, appDir: string, processes: ProcessDef[]): void {
  for (const { type } of processes) {
    const dir = path.join(layers.dir, 'launcher', 'env.launch', type);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'PATH.prepend'), path.join(appDir, 'node_modules', '.bin'));
    fs.writeFileSync(path.join(dir, 'PATH.delim'), ':');
    fs.writeFileSync(path.join(dir, 'NODE_ENV.default'), 'production');
  }
}
