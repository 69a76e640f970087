import { describe, expect, it } from 'vitest';
import type { Recorder, RequestEvent } from '../../src/observe/events.js';
import { createLogger } from '../../src/observe/logger.js';
import { LoggingRecorder } from '../../src/observe/request-log.js';
import type { LogLevel } from '../../src/observe/log-levels.js';

/** The recorder the log wraps, recording nothing: only the log's own lines are under test. */
const NO_RECORDER: Recorder = {
  record: () => undefined,
  task: () => undefined,
  streamOpened: () => () => undefined,
  sessionSeen: () => undefined,
};

function recorderAt(level: LogLevel, logArguments = false): { lines: () => Array<Record<string, unknown>>; recorder: LoggingRecorder } {
  const written: string[] = [];
  const logger = createLogger({ level, destination: { write: (line: string) => void written.push(line) } });
  return { lines: () => written.map((line) => JSON.parse(line) as Record<string, unknown>), recorder: new LoggingRecorder(NO_RECORDER, logger, logArguments) };
}

const base: RequestEvent = { wire: 'sep2663', method: 'tools/call', principal: 'alice', outcome: 'ok', latencyMs: 12.345 };

describe('the request log', () => {
  it('writes polls and plain requests that went well at debug only, the task API and failures at info', () => {
    const info = recorderAt('info');
    const created = '{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"t2","status":"working"}}';
    info.recorder.record({ ...base, method: 'tasks/get', params: { taskId: 't1' } });
    info.recorder.record({ ...base, wire: 'tasks-create', method: 'tasks/status', params: { taskId: 't1' } });
    info.recorder.record({ ...base, wire: 'passthrough', method: 'tools/call', outcome: '-32603' });
    info.recorder.record(base);
    info.recorder.record({ ...base, method: 'ping' });
    info.recorder.record({ ...base, reply: { kind: 'json-text', status: 200, text: created } });
    info.recorder.record({ ...base, outcome: '-32602' });
    info.recorder.record({ ...base, method: 'tasks/cancel', params: { taskId: 't1' } });
    expect(info.lines().map((line) => [line.level, line.method, line.outcome, line.taskId])).toEqual([
      [30, 'tools/call', 'ok', 't2'],
      [30, 'tools/call', '-32602', undefined],
      [30, 'tasks/cancel', 'ok', 't1'],
    ]);

    const debug = recorderAt('debug');
    debug.recorder.record({ ...base, method: 'tasks/get', params: { taskId: 't1' } });
    expect(debug.lines()).toEqual([expect.objectContaining({ level: 20, method: 'tasks/get', taskId: 't1', durationMs: 12.3 })]);
  });

  it('takes the task id from the answer that created the task, on each wire', () => {
    const { lines, recorder } = recorderAt('debug');
    const text = '{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"sep-\\"1\\"","status":"working"}}';
    recorder.record({ ...base, reply: { kind: 'json-text', status: 200, text } });
    recorder.record({ ...base, wire: 'mcp-2025-11-25', reply: { kind: 'json', status: 200, body: { result: { task: { taskId: 'legacy-1' } } } } });
    recorder.record({ ...base, wire: 'tasks-create', method: 'tasks/create', reply: { kind: 'json', status: 200, body: { result: { taskId: 'dialect-1' } } } });
    // A complete result that mentions a taskId in its content names no task.
    recorder.record({ ...base, reply: { kind: 'json-text', status: 200, text: '{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[{"type":"text","text":"\\"taskId\\":\\"x\\""}]}}' } });
    expect(lines().map((line) => line.taskId)).toEqual(['sep-"1"', 'legacy-1', 'dialect-1', undefined]);
  });

  it('writes tool arguments only when asked', () => {
    const event: RequestEvent = { ...base, tool: 'greet', params: { name: 'greet', arguments: { name: 'secret' } } };
    const plain = recorderAt('debug');
    plain.recorder.record(event);
    expect(plain.lines()[0]).not.toHaveProperty('arguments');
    const asked = recorderAt('debug', true);
    asked.recorder.record(event);
    expect(asked.lines()[0]).toMatchObject({ arguments: { name: 'secret' } });
  });

  it('writes task lifecycle events at info', () => {
    const { lines, recorder } = recorderAt('info');
    recorder.task({ kind: 'completed', taskId: 't9', wire: 'sep2663', tool: 'build', createdAt: 1_000, expiresAt: 61_000, at: 4_500 });
    expect(lines()).toEqual([expect.objectContaining({ level: 30, msg: 'task completed', taskId: 't9', wire: 'sep2663', tool: 'build', ageMs: 3_500 })]);
    const warn = recorderAt('warn');
    warn.recorder.task({ kind: 'created', taskId: 't9', wire: 'sep2663', tool: 'build', createdAt: 1_000, expiresAt: 61_000, at: 1_000 });
    expect(warn.lines()).toEqual([]);
  });
});
