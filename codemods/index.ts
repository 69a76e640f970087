/** The codemod: `mcp-tasks-shim codemod <path>` (cli.ts), or runCodemod() from code. */
export { runCodemodCli, CODEMOD_USAGE } from './cli.js';
export { runCodemod, CodemodInputError, type CodemodOptions, type CodemodResult } from './run.js';
export { TRANSFORMS } from './registry.js';
export { MARKERS, MARKER_PREFIX, type MarkerCode } from './markers.js';
export type { CodemodReport, ReportRow, RunSummary } from './report.js';
