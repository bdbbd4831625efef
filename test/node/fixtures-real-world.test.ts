/**
 * real-world app families (workspaces, reused builds, every Yarn, locked installs…), and
 * apps as they come from other platforms and real Yarn set-ups (a release checked in at
 * yarnPath, a Berry project left to Yarn 1, Plug'n'Play started with plain node after a custom
 * build, a PnP loader that fails on the default Node.js, Paketo's BP_NODE_VERSION, a server.js
 * without package.json, an app with no SIGTERM handler), as fixtures/node-*: see driver.ts.
 */
import { fixtureSuite } from './driver.ts';

fixtureSuite(
  [
    'node-custom-yarn3',
    'node-ws-npm',
    'node-ws-pnpm',
    'node-ws-yarn1',
    'node-ws-bun',
    'node-install-scripts-once',
    'node-yarn3',
    'node-yarn-path',
    'node-pnpm-lock6',
    'node-lock-outdated',
    'node-lock-outdated-bun',
    'node-lock-outdated-yarn1',
    'node-yarn4-pnp-esm',
    'node-devdep-postinstall',
    'node-start-unbuilt',
    'node-vite-unbuilt',
    'node-yarn-path-berry2',
    'node-yarn-berry-engines',
    'node-yarn-berry-old-lock',
    'node-pnp-custom-build',
    'node-pnp-esm-old-yarn',
    'node-paketo-node-version',
    'node-server-js-only',
    'node-no-sigterm',
  ],
  // The PnP loader check runs on what the install left: that failure starts from the warm cache.
  { warmFailure: (c) => c.expect.errorId === 'node/pnp/loader-node-incompatible' },
);
