/**
 * Issue 30: apps as they come from other platforms and real-world Yarn set-ups, as fixtures/node-*
 * (see driver.ts): a checked-in Yarn at yarnPath, a Berry project left to Yarn 1, Plug'n'Play started
 * with plain node after a custom build, a PnP loader that fails on the default Node.js, Paketo's
 * BP_NODE_VERSION, a server.js without package.json, and an app with no SIGTERM handler.
 */
import { fixtureSuite } from './driver.ts';

fixtureSuite(['node-yarn-path-berry2', 'node-yarn-berry-engines', 'node-pnp-custom-build', 'node-pnp-esm-old-yarn', 'node-paketo-node-version', 'node-server-js-only', 'node-no-sigterm']);
