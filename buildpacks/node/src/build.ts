import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { runBuild } from '../../../lib/cnb/context.ts';
import { installLaunch } from '../../../lib/launch/entry.ts';
import { Logger } from '../../../lib/log.ts';

runBuild(async (ctx) => {
  const log = new Logger();
  log.section('rbp/node');
  const lock = fs.existsSync(path.join(ctx.appDir, 'package-lock.json'));
  await log.step(`Installing dependencies with npm ${lock ? 'ci' : 'install'}`, () =>
    execa('npm', [lock ? 'ci' : 'install', '--omit=dev', '--no-audit', '--no-fund'], { cwd: ctx.appDir, stdio: 'inherit', env: ctx.env }),
  );
  installLaunch(ctx, { runtime: 'node' });
});
