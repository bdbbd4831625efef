/** Detect (contract, `phpserver`): the webroot holds an `index.php` or an `index.html`. */
import type { DetectFn } from '../../../lib/cnb/context.ts';
import { adoptForeignVariables } from '../../../lib/config/foreign.ts';
import { findIndex, INDEX_FILES } from '../../../lib/app-path.ts';
import { missingIndexReason, resolveWebroot } from './webroot.ts';

// The build (scripts/build.mjs) makes this bin/detect's program, and the module rbp runs in-process.
const detect: DetectFn = (ctx) => {
  adoptForeignVariables(ctx.env, 'phpserver');
  const webroot = resolveWebroot(ctx.appDir, ctx.env);
  const index = findIndex(webroot.abs, INDEX_FILES.phpserver);
  if (!index) return { pass: false, reason: missingIndexReason(webroot) };
  return {
    pass: true,
    reason: `found ${webroot.rel === '.' ? '' : `${webroot.rel}/`}${index}`,
    plan: { provides: [{ name: 'phpserver' }], requires: [{ name: 'phpserver' }] },
  };
};
export default detect;
