import fs from 'node:fs';
import path from 'node:path';
import { runDetect } from '../../../lib/cnb/context.ts';

runDetect((ctx) => {
  const webroot = path.join(ctx.appDir, ctx.env.CC_WEBROOT ?? '/');
  const index = ['index.php', 'index.html'].find((f) => fs.existsSync(path.join(webroot, f)));
  if (!index) return { pass: false, reason: `no index.php or index.html in ${webroot}` };
  return { pass: true, plan: { provides: [{ name: 'phpserver' }], requires: [{ name: 'phpserver' }] } };
});
