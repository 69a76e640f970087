#!/usr/bin/env node
// Runs the TypeScript sources directly, so the CLI and `npm start` need no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
