import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './log-levels.js';

export type { Logger };

export interface LoggerOptions {
  level: LogLevel;
  /** Human-readable lines instead of JSON; the CLI asks for them when stderr is a terminal. */
  pretty?: boolean;
  /** Where lines go; default stderr, written asynchronously and flushed when the process exits. */
  destination?: DestinationStream;
}

/**
 * stderr without a write syscall per line: at `info` every task-creating request writes a line,
 * and a synchronous write per request cost task creation and forwarding a measurable share of
 * their CPU. What is still buffered at `process.exit` is written out then.
 */
function stderrDestination(): DestinationStream {
  const destination = pino.destination({ fd: 2, sync: false });
  process.once('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // A closed stderr has nowhere to go.
    }
  });
  return destination;
}

/**
 * The replica's structured log: one JSON object per line (pino), on stderr by default. stdout
 * keeps the plain start-up lines that people and scripts read (docs/operations.md, "Logs").
 */
export function createLogger(options: LoggerOptions): Logger {
  const destination = options.destination ?? stderrDestination();
  return pino(
    { level: options.level, timestamp: pino.stdTimeFunctions.isoTime, base: { pid: process.pid } },
    options.pretty ? prettyLines(destination) : destination,
  );
}

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Members every line has, which the pretty form shows in its own way or leaves out. */
const SHOWN_APART = new Set(['level', 'time', 'msg', 'pid']);

/**
 * `12:00:01.234 INFO  request method=tools/call wire=sep2663 …`: each JSON line as pino wrote it,
 * re-rendered for a person at a terminal. Only used there, so the parse per line is no concern.
 */
function prettyLines(out: DestinationStream): DestinationStream {
  return {
    write(line: string): void {
      out.write(`${prettyLine(line)}\n`);
    },
  };
}

export function prettyLine(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.trimEnd();
  }
  const time = typeof entry.time === 'string' ? entry.time.slice(11, 23) : '';
  const level = (LEVEL_NAMES[entry.level as number] ?? String(entry.level)).padEnd(5);
  let text = `${time} ${level} ${String(entry.msg ?? '')}`;
  for (const [key, value] of Object.entries(entry)) {
    if (SHOWN_APART.has(key) || value === undefined) continue;
    text += ` ${key}=${typeof value === 'string' && !/[\s"=]/.test(value) ? value : JSON.stringify(value)}`;
  }
  return text;
}

/**
 * An error as log fields: its message and the chain of causes below it (`fetch failed` is
 * only useful with the `ECONNREFUSED 127.0.0.1:3001` under it). No stack: these are expected
 * failures of the outside world, not bugs.
 */
export function errorFields(err: unknown): { error: string; cause?: string } {
  const causes: string[] = [];
  let next = err instanceof Error ? err.cause : undefined;
  for (let depth = 0; next !== undefined && depth < 5; depth++) {
    causes.push(describe(next));
    next = next instanceof Error ? next.cause : undefined;
  }
  return { error: describe(err), cause: causes.length > 0 ? causes.join(' <- ') : undefined };
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
}
