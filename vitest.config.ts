import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'codemods/**/*.test.ts'],
    // Fixtures are inputs of tests (the codemod's corpus of real client code holds test files of its own).
    exclude: ['**/node_modules/**', 'test/fixtures/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Each file starts its own redis-server and shim processes on free ports; two cores keep this modest.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
