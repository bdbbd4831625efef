import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['lib/**/*.test.ts', 'buildpacks/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Lifecycle tests start processes and servers; two cores are all CI has.
    maxWorkers: 2,
    // Every temporary folder of the run in one place, removed at the end (test/setup/tmp-root.ts).
    globalSetup: ['test/setup/tmp-root.ts'],
  },
});
