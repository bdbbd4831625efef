/** Detect (contract, `phpserver`): the webroot holds an `index.php` or an `index.html`. */
import type { DetectFn } from '../../../lib/cnb/context.ts';
import { detectVariables, type QuickDetect } from '../../../lib/cnb/quick-detect.ts';
import { adoptForeignVariables } from '../../../lib/config/foreign.ts';
import { findIndex, INDEX_FILES } from '../../../lib/app-path.ts';
import { missingIndexReason, resolveWebroot } from './webroot.ts';

const PLAN = { provides: [{ name: 'phpserver' }], requires: [{ name: 'phpserver' }] };

const detect: DetectFn = (ctx) => {
  adoptForeignVariables(ctx.env, 'phpserver');
  const webroot = resolveWebroot(ctx.appDir, ctx.env);
  const index = findIndex(webroot.abs, INDEX_FILES.phpserver);
  if (!index) return { pass: false, reason: missingIndexReason(webroot) };
  return {
    pass: true,
    reason: `found ${webroot.rel === '.' ? '' : `${webroot.rel}/`}${index}`,
    plan: PLAN,
  };
};
export default detect;

/** What bin/detect answers without Node.js (lib/cnb/quick-detect.ts): an index at the root, CC_WEBROOT unset. */
export const quick: QuickDetect = {
  variables: detectVariables('phpserver'),
  files: INDEX_FILES.phpserver,
  passes: Object.fromEntries(INDEX_FILES.phpserver.map((f) => [f, `found ${f}`])),
  plan: PLAN,
  declined: missingIndexReason({ rel: '.', abs: '{app}', setting: undefined }, true),
};
