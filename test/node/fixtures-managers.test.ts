/** fixtures/node-* built with pnpm, Yarn, Bun, and with Deno or a TypeScript build step: see driver.ts. */
import { fixtureSuite } from './driver.ts';

fixtureSuite(['node-pnpm', 'node-yarn1', 'node-yarn4-nm', 'node-yarn4-pnp', 'node-bun', 'node-bun-start', 'node-typescript', 'node-deno']);
