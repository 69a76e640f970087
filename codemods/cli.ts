import { writeFileSync } from 'node:fs';
import { TRANSFORMS, UnknownTransformError } from './registry.js';
import { rowText, summaryText } from './report.js';
import { CodemodInputError, runCodemod } from './run.js';
import { MARKER_PREFIX } from './markers.js';

export const CODEMOD_USAGE = `Usage: mcp-tasks-shim codemod <path> [options]

Rewrites client code written for the 2025-11-25 experimental tasks API (and the tasks/create
dialect) to the client helper (mcp-tasks-shim/client) and SEP-2663 names. What it cannot rewrite
safely gets a "// ${MARKER_PREFIX}(<code>): …" comment and a report row.

Options:
  --dry-run          change no source file: print a unified diff per file and a summary
                     (a --report FILE given with it is still written: it is the preview's record)
  --transforms a,b   run only these transforms (see --list)
  --list             list the transforms and exit
  --report FILE      write the JSON report (summary, one row per marker or skipped file)
  --no-todos         leave no marker comments in the code (the report still has the rows)
  --no-types         never ask the type checker (by default files governed by a tsconfig.json
                     are analysed with types: a receiver is rewritten when it is the SDK's Client)
  --force            run even when the git tree under <path> has uncommitted changes
  -h, --help         this text

Exit status: 0 done, 1 done but some files were skipped (parse or transform errors), 2 bad input.
`;

interface ParsedArgs {
  path?: string;
  dryRun: boolean;
  transforms?: string[];
  list: boolean;
  report?: string;
  noTodos: boolean;
  noTypes: boolean;
  force: boolean;
  help: boolean;
}

function parseArgs(argv: readonly string[]): ParsedArgs {
  const parsed: ParsedArgs = { dryRun: false, list: false, noTodos: false, noTypes: false, force: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = (): string => {
      const eq = arg.indexOf('=');
      if (eq !== -1) return arg.slice(eq + 1);
      const next = argv[++i];
      if (next === undefined || next.startsWith('--')) throw new CodemodInputError(`${arg} needs a value`);
      return next;
    };
    const flag = arg.split('=')[0];
    switch (flag) {
      case '--dry-run':
        parsed.dryRun = true;
        break;
      case '--list':
        parsed.list = true;
        break;
      case '--no-todos':
        parsed.noTodos = true;
        break;
      case '--no-types':
        parsed.noTypes = true;
        break;
      case '--force':
        parsed.force = true;
        break;
      case '-h':
      case '--help':
        parsed.help = true;
        break;
      case '--transforms':
        parsed.transforms = value().split(',').map((s) => s.trim()).filter(Boolean);
        break;
      case '--report':
        parsed.report = value();
        break;
      default:
        if (arg.startsWith('-')) throw new CodemodInputError(`unknown option ${arg}`);
        if (parsed.path !== undefined) throw new CodemodInputError(`one path only (got ${parsed.path} and ${arg})`);
        parsed.path = arg;
    }
  }
  return parsed;
}

/** `mcp-tasks-shim codemod …`: returns the exit status. */
export async function runCodemodCli(argv: readonly string[]): Promise<number> {
  let args: ParsedArgs;
  try {
    args = parseArgs(argv);
  } catch (err) {
    process.stderr.write(`mcp-tasks-shim codemod: ${(err as Error).message}\n\n${CODEMOD_USAGE}`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(CODEMOD_USAGE);
    return 0;
  }
  if (args.list) {
    const width = Math.max(...TRANSFORMS.map((t) => t.name.length));
    process.stdout.write(TRANSFORMS.map((t) => `${t.name.padEnd(width)}  ${t.description}\n`).join(''));
    return 0;
  }
  if (args.path === undefined) {
    process.stderr.write(`mcp-tasks-shim codemod: which path? (a directory or a file)\n\n${CODEMOD_USAGE}`);
    return 2;
  }
  try {
    const { report, exitCode } = await runCodemod({ path: args.path, dryRun: args.dryRun, transforms: args.transforms, noTodos: args.noTodos, noTypes: args.noTypes, force: args.force });
    const markers = report.rows.filter((r) => r.code !== 'parse-error' && r.code !== 'transform-error');
    if (markers.length > 0 && markers.length <= 50) process.stdout.write(markers.map((r) => `${rowText(r)}\n`).join(''));
    process.stdout.write(summaryText(report.summary));
    if (args.report) writeFileSync(args.report, `${JSON.stringify(report, null, 2)}\n`);
    return exitCode;
  } catch (err) {
    if (err instanceof CodemodInputError || err instanceof UnknownTransformError) {
      process.stderr.write(`mcp-tasks-shim codemod: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}
