/** @module Test runner config: tests live beside the code (src/**\/*.test.ts) plus cross-cutting ones in test/. */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Packing and installing the tarball takes minutes: `npm run test:package`, run by .ci/run.
    exclude: ['test/package/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
