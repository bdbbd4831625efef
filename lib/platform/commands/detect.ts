/** `rbp detect APP`: which buildpack group passes detection, and the build plan. */
import path from 'node:path';
import { writePlatformEnv } from '../../cnb/env.ts';
import { EXIT } from '../../cnb/exit.ts';
import { errorJson } from '../../errors.ts';
import { checkAppDir } from '../app-copy.ts';
import { collectEnv } from '../cli-env.ts';
import { writeJson } from '../cli-json.ts';
import { detectApp } from '../detect.ts';
import { bpKey } from '../order.ts';
import { filteredHostEnv, operatorEnv } from '../env.ts';
import { failureError } from '../failure.ts';
import { readProjectDescriptor } from '../project-descriptor.ts';
import { privateTemp, removeOnSignals, sweepStaleTemps } from '../temp.ts';
import { list, one, orderOf, str, type Handler } from './context.ts';

export const run: Handler = async (ctx) => {
  const { log, streams, values } = ctx;
  const app = one(ctx, 'APP directory');
  checkAppDir(app, 'detect');
  const project = readProjectDescriptor(app, str(ctx, 'descriptor'), log);
  const env = collectEnv(list(ctx, 'env-file'), list(ctx, 'env'), project?.env);
  const order = await orderOf(ctx, project);
  removeOnSignals();
  // The platform folder holds the user's variables (secrets among them): private, removed on every
  // exit path; one a killed rbp left is removed first.
  sweepStaleTemps();
  const tmp = privateTemp('rbp-platform-');
  const platformDir = path.join(tmp.dir, 'platform');
  writePlatformEnv(platformDir, env);
  try {
    log.section('Detect');
    const penv = { base: filteredHostEnv(), user: env, operator: operatorEnv(), platformDir, scratch: tmp.dir };
    const r = await detectApp(order, path.resolve(app), project?.filter, penv, log);
    const failure = r.code === EXIT.detectError ? 'detection failed with a buildpack error' : 'no buildpack group passed detection';
    if (r.group) {
      log.info(`group: ${r.group.map(bpKey).join(', ')}`);
      for (const e of r.entries ?? [])
        log.detail(`plan: ${e.requires.map((q) => q.name).join(', ')} ← ${e.providers.map((p) => p.descriptor.buildpack.id).join(', ')}`);
    } else log.fail(failure);
    if (values.json) {
      writeJson(streams.stdout, {
        exitCode: r.code,
        passed: Boolean(r.group),
        group: (r.group ?? []).map((g) => ({ id: g.descriptor.buildpack.id, version: g.descriptor.buildpack.version })),
        plan: (r.entries ?? []).map((e) => ({ requires: e.requires.map((q) => q.name), providers: e.providers.map((p) => p.descriptor.buildpack.id) })),
        ...(r.code !== 0 ? { error: errorJson(failureError(r.code, failure)) } : {}),
      });
    }
    if (r.code !== 0) log.flushHeld();
    return r.code;
  } finally {
    tmp.remove();
  }
};
