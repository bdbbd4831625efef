/**
 * The tools an app's own commands call, as fixtures/node-* (see driver.ts): the package manager the
 * build used stays on PATH at launch, and a custom command gets the one its lock file or
 * packageManager implies, at build and at launch (pnpm, Yarn 1, Yarn Berry, Bun); a custom
 * command's installs include development dependencies with CC_NODE_DEV_DEPENDENCIES=install; Bun is
 * installed beside another manager when the app calls it; native modules compile against the
 * installed Node.js headers with every manager; engines ranges of the managers choose their versions.
 */
import { fixtureSuite } from './driver.ts';

fixtureSuite(
  [
    'node-custom-pnpm',
    'node-custom-yarn1',
    'node-custom-yarn-berry',
    'node-custom-bun',
    'node-bun-beside',
    'node-native-addon',
    'node-native-addon-berry',
    'node-engines-managers',
    'node-engines-unsatisfied',
  ],
  // A custom command that needs a development dependency fails once it has run: that case starts from the warm cache too.
  { warmFailure: (c) => c.expect.errorId === 'node/dev-dependencies/needed' },
);
