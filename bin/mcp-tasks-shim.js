#!/usr/bin/env node
// Runs the compiled CLI: `npm run build` makes dist/, and `npm start`, `npm test` and `npm run bench` build first.
import { existsSync } from 'node:fs';
import process from 'node:process';
import { URL } from 'node:url';

const main = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('mcp-tasks-shim: dist/ is missing. Run `npm run build` (or `npm start`, which builds first).\n');
  process.exit(1);
}
await import(main.href);
