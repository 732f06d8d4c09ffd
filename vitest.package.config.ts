/** @module Test runner config for the package test: pack, install into an empty folder, run the installed CLI (slow: minutes). */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/package/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 900_000,
    pool: 'forks',
  },
});
