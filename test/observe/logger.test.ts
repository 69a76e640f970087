import { describe, expect, it } from 'vitest';
import { createLogger, errorFields, prettyLine } from '../../src/observe/logger.js';

/** A destination that keeps what the logger wrote. */
function collect(): { lines: string[]; write(line: string): void } {
  const lines: string[] = [];
  return { lines, write: (line) => void lines.push(line) };
}

describe('the logger', () => {
  it('writes one JSON object per line, from the configured level up', () => {
    const out = collect();
    const logger = createLogger({ level: 'info', destination: out });
    logger.debug({ method: 'tasks/get' }, 'request');
    logger.info({ method: 'tools/call', durationMs: 3.2 }, 'request');
    expect(out.lines).toHaveLength(1);
    expect(JSON.parse(out.lines[0] as string)).toMatchObject({ level: 30, msg: 'request', method: 'tools/call', durationMs: 3.2, pid: process.pid });
    expect(JSON.parse(out.lines[0] as string).time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('writes nothing at silent', () => {
    const out = collect();
    const logger = createLogger({ level: 'silent', destination: out });
    logger.fatal('down');
    expect(out.lines).toEqual([]);
  });

  it('renders lines for a terminal when pretty', () => {
    const out = collect();
    createLogger({ level: 'info', pretty: true, destination: out }).info({ wire: 'sep2663', tool: 'a b', outcome: '-32602' }, 'request');
    expect(out.lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}request wire=sep2663 tool="a b" outcome=-32602\n$/);
  });

  it('leaves a line that is not JSON as it is', () => {
    expect(prettyLine('plain text\n')).toBe('plain text');
  });
});

describe('errorFields', () => {
  it('names the chain of causes under an error, with their codes', () => {
    const refused = Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' });
    const fetchFailed = new TypeError('fetch failed', { cause: refused });
    expect(errorFields(new Error('upstream is unavailable', { cause: fetchFailed }))).toEqual({
      error: 'upstream is unavailable',
      cause: 'fetch failed <- ECONNREFUSED: connect refused',
    });
  });

  it('has no cause for an error without one', () => {
    expect(errorFields(new Error('boom'))).toEqual({ error: 'boom', cause: undefined });
    expect(errorFields('text')).toEqual({ error: 'text', cause: undefined });
  });
});
