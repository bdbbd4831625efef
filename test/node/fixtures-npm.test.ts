/** fixtures/node-* built with npm (and the error cases): see driver.ts. */
import { fixtureSuite } from './driver.ts';

fixtureSuite([
  'node-npm-lock',
  'node-no-lock',
  'node-main-only',
  'node-procfile',
  'node-dev-deps',
  'node-prepoststart',
  'node-custom-tool',
  'node-engines',
  'node-version-env',
  'node-bad-package-json',
  'node-nothing-to-start',
  'node-install-scripts',
]);
