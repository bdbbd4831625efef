/**
 * Detect (contract, node rule 1): a package.json and something to start — scripts.start, main,
 * CC_RUN_COMMAND, or a Procfile's web (procfile.ts). A package.json with nothing to start (a static site generator's project) is left
 * to the next runtime.
 */
import type { DetectFn } from '../../../lib/cnb/context.ts';
import { bareEntryFile, NOTHING_TO_START_FIX, readPackageJson, START_SOURCE, startMethod } from './package-json.ts';

// The build (scripts/build.mjs) makes this bin/detect's program, and the module rbp runs in-process.
const detect: DetectFn = (ctx) => {
  const pkg = readPackageJson(ctx.appDir);
  if (!pkg) {
    // server.js with no package.json: taken, so that the build says which package.json to add.
    const entry = bareEntryFile(ctx.appDir, ctx.env);
    if (entry)
      return {
        pass: true,
        reason: `rbp/node: ${entry} and no package.json: the build says what to add`,
        plan: { provides: [{ name: 'node' }], requires: [{ name: 'node' }] },
      };
    return { pass: false, reason: 'rbp/node: no package.json at the application root' };
  }
  const start = startMethod(pkg, ctx.env, ctx.appDir);
  if (!start) return { pass: false, reason: `rbp/node: package.json has nothing to start. ${NOTHING_TO_START_FIX}` };
  const how = start.kind === 'main' ? `main (${start.file})` : START_SOURCE[start.kind];
  return { pass: true, reason: `rbp/node: package.json, started by ${how}`, plan: { provides: [{ name: 'node' }], requires: [{ name: 'node' }] } };
};
export default detect;
