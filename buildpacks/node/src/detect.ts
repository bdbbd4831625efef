/**
 * Detect (contract, node rule 1): a package.json and something to start — scripts.start, main,
 * CC_RUN_COMMAND, or a Procfile's web (procfile.ts). A package.json with nothing to start (a static site generator's project) is left
 * to the next runtime.
 */
import type { DetectFn } from '../../../lib/cnb/context.ts';
import { BARE_ENTRY_FILES, bareEntryFile, NOTHING_TO_START_FIX, PACKAGE_JSON, readPackageJson, START_SOURCE, startMethod } from './package-json.ts';
import type { QuickDetect } from '../../../lib/cnb/quick-detect.ts';

const NO_PACKAGE_JSON = 'rbp/node: no package.json at the application root';
const plan = { provides: [{ name: 'node' }], requires: [{ name: 'node' }] };

const detect: DetectFn = (ctx) => {
  const pkg = readPackageJson(ctx.appDir);
  if (!pkg) {
    // server.js with no package.json: taken, so that the build says which package.json to add.
    const entry = bareEntryFile(ctx.appDir, ctx.env);
    if (entry) return { pass: true, reason: `rbp/node: ${entry} and no package.json: the build says what to add`, plan };
    return { pass: false, reason: NO_PACKAGE_JSON };
  }
  const start = startMethod(pkg, ctx.env, ctx.appDir);
  if (!start) return { pass: false, reason: `rbp/node: package.json has nothing to start. ${NOTHING_TO_START_FIX}` };
  const how = start.kind === 'main' ? `main (${start.file})` : START_SOURCE[start.kind];
  return { pass: true, reason: `rbp/node: package.json, started by ${how}`, plan };
};
export default detect;

/** What bin/detect answers without Node.js (lib/cnb/quick-detect.ts): no package.json and no bare entry file at the root declines, whatever the variables. */
export const quick: QuickDetect = { variables: [], files: [PACKAGE_JSON, ...BARE_ENTRY_FILES], declined: NO_PACKAGE_JSON };
