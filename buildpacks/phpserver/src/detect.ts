/** Detect (contract, `phpserver`): the webroot holds an `index.php` or an `index.html`. */
import type { DetectFn } from '../../../lib/cnb/context.ts';
import { findIndex, missingIndexReason, resolveWebroot } from './webroot.ts';

// The build (scripts/build.mjs) makes this bin/detect's program, and the module rbp runs in-process.
const detect: DetectFn = (ctx) => {
  const webroot = resolveWebroot(ctx.appDir, ctx.env.CC_WEBROOT);
  const index = findIndex(webroot);
  if (!index) return { pass: false, reason: missingIndexReason(webroot) };
  return {
    pass: true,
    reason: `found ${webroot.rel === '.' ? '' : `${webroot.rel}/`}${index}`,
    plan: { provides: [{ name: 'phpserver' }], requires: [{ name: 'phpserver' }] },
  };
};
export default detect;
