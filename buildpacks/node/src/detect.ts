import fs from 'node:fs';
import path from 'node:path';
import { runDetect } from '../../../lib/cnb/context.ts';

runDetect((ctx) => {
  const file = path.join(ctx.appDir, 'package.json');
  if (!fs.existsSync(file)) return { pass: false, reason: 'no package.json at the application root' };
  const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { scripts?: { start?: string }; main?: string };
  if (!pkg.scripts?.start && !pkg.main && !ctx.env.CC_RUN_COMMAND) {
    return { pass: false, reason: 'package.json has nothing to start: add scripts.start or main, or set CC_RUN_COMMAND' };
  }
  return { pass: true, plan: { provides: [{ name: 'node' }], requires: [{ name: 'node' }] } };
});
