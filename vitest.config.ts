import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'codemods/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Each file starts its own redis-server and shim processes on free ports; two cores keep this modest.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
