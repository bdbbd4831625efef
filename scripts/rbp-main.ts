// What scripts/rbp.ts loads once the compile cache is on: one module, so one chunk of the bundle.
export { EXIT } from '../lib/cnb/exit.ts';
export { main } from '../lib/platform/cli.ts';
