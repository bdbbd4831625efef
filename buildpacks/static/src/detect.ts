import type { DetectFn } from '../../../lib/cnb/context.ts';
import { detectVariables, type QuickDetect } from '../../../lib/cnb/quick-detect.ts';
import { adoptForeignVariables } from '../../../lib/config/foreign.ts';
import { readConfig } from './config.ts';
import { allDetectionFiles, renderCommand } from './generators.ts';
import { installPlan } from './js-install.ts';
import { show } from './paths.ts';
import { planSite } from './site-plan.ts';
import { findIndex } from '../../../lib/app-path.ts';
import { INDEX_FILES } from './webroot.ts';

// Contract, `static`: an index in the webroot, CC_BUILD_COMMAND, or a generator of the table.
const PLAN = { provides: [{ name: 'static' }], requires: [{ name: 'static' }] };

/** What it says when nothing makes a site: where it looked. */
function missing(webrootRel: string, setByVariable: boolean): string {
  return (
    `missing: an index.html or index.htm in ${show(webrootRel)}${setByVariable ? ' (CC_WEBROOT)' : ''}, ` +
    `a CC_BUILD_COMMAND, or a static site generator file at the root (${allDetectionFiles().join(', ')})`
  );
}

const detect: DetectFn = (ctx) => {
  adoptForeignVariables(ctx.env, 'static');
  const cfg = readConfig(ctx.env, ctx.appDir);
  const plan = planSite(cfg, ctx.appDir);
  if (plan.kind === 'command') return { pass: true, plan: PLAN, reason: `CC_BUILD_COMMAND: ${plan.command}` };
  if (plan.kind === 'generator') {
    const { generator: g, file } = plan.detection;
    const install = g.runner === 'js' ? installPlan(ctx.appDir).argv : undefined;
    return { pass: true, plan: PLAN, reason: `${g.name} (${file}): ${renderCommand(g, cfg.outDir.rel, install)}` };
  }
  const webroot = cfg.webroot ?? { rel: '', abs: ctx.appDir };
  const index = findIndex(webroot.abs, INDEX_FILES);
  if (index) return { pass: true, plan: PLAN, reason: show(webroot.rel === '' ? index : `${webroot.rel}/${index}`) };
  return { pass: false, reason: missing(webroot.rel, Boolean(cfg.webroot)) };
};
export default detect;

/**
 * What bin/detect answers without Node.js (lib/cnb/quick-detect.ts), with no variable of static's set:
 * a generator's file sends the question on to the full detect (it names the command); an index at the
 * root passes; nothing there declines.
 */
export const quick: QuickDetect = {
  variables: detectVariables('static'),
  files: [...allDetectionFiles(), ...INDEX_FILES],
  passes: Object.fromEntries(INDEX_FILES.map((f) => [f, show(f)])),
  plan: PLAN,
  declined: missing('', false),
};
