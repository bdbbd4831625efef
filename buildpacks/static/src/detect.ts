import fs from 'node:fs';
import path from 'node:path';
import { runDetect } from '../../../lib/cnb/context.ts';

runDetect((ctx) => {
  const webroot = path.join(ctx.appDir, ctx.env.CC_WEBROOT ?? '/');
  const index = ['index.html', 'index.htm'].find((f) => fs.existsSync(path.join(webroot, f)));
  if (!index && !ctx.env.CC_BUILD_COMMAND) return { pass: false, reason: `no index.html or index.htm in ${webroot}` };
  return { pass: true, plan: { provides: [{ name: 'static' }], requires: [{ name: 'static' }] } };
});
