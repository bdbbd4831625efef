/** Issue 12: real-world app families (workspaces, reused builds, every Yarn, locked installs…), as fixtures/node-*: see driver.ts. */
import { fixtureSuite } from './driver.ts';

fixtureSuite(
  ['node-custom-yarn3', 'node-ws-npm', 'node-ws-pnpm', 'node-ws-yarn1', 'node-ws-bun', 'node-install-scripts-once', 'node-yarn3', 'node-yarn-path', 'node-pnpm-lock6', 'node-lock-outdated', 'node-lock-outdated-bun', 'node-lock-outdated-yarn1', 'node-yarn4-pnp-esm', 'node-devdep-postinstall', 'node-start-unbuilt', 'node-vite-unbuilt'],
);
