import fs from 'node:fs';
import { runLaunch } from '../../../lib/launch/entry.ts';

runLaunch((env) => {
  const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { scripts?: { start?: string }; main?: string };
  const argv = env.CC_RUN_COMMAND ? ['/bin/sh', '-c', env.CC_RUN_COMMAND] : pkg.scripts?.start ? ['npm', 'start'] : ['node', pkg.main!];
  return { argv, env: { NODE_ENV: 'production', PORT: env.PORT ?? '8080' }, facts: { runtime: 'node' } };
});
