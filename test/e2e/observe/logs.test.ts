import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnDemoUpstream, type DemoUpstreamProcess } from '../../support/demo-upstream-process.js';
import { LegacySession } from '../../support/legacy-client.js';
import { pollUntil, Sep2663Client, textOf } from '../../support/sep2663-client.js';
import { startShimProcess, type ShimProcess } from '../../support/shim-process.js';

const TOKEN = 'log-scan-bearer-token-7f3a9c';
/** A tool argument that must never reach a log line (it also comes back in results and status messages). */
const SECRET = 'argument-secret-b41d';
/** The plain lines a shim writes to stderr besides its log: the embedded store's warning, the shutdown's. */
const PLAIN_STDERR = /^(WARNING: embedded task store|mcp-tasks-shim: )/;

/** What the operating system says of a peer that died: refused for a new connection, reset for a kept-alive one. */
const GONE = /ECONNREFUSED|ECONNRESET|other side closed/;

const dir = mkdtempSync(join(tmpdir(), 'mts-logs-'));
const tokensFile = join(dir, 'tokens.json');
writeFileSync(tokensFile, JSON.stringify({ [TOKEN]: 'alice' }));

type Line = Record<string, unknown> & { level: number; msg: string };

/** Every stderr line of the shim's log, parsed; a line that is neither JSON nor the known plain one fails the test. */
function logLines(shim: ShimProcess): Line[] {
  const lines: Line[] = [];
  for (const line of shim.stderr().split('\n')) {
    if (line === '' || PLAIN_STDERR.test(line)) continue;
    lines.push(JSON.parse(line) as Line);
  }
  return lines;
}

function requestLines(shim: ShimProcess, match: Record<string, unknown>): Line[] {
  return logLines(shim).filter((line) => line.msg === 'request' && Object.entries(match).every(([key, value]) => line[key] === value));
}

/** Waits (bounded) until a line matching `match` has been written. */
function waitForLine(shim: ShimProcess, msg: string, match: Record<string, unknown> = {}): Promise<Line> {
  const find = (): Line | undefined => logLines(shim).find((line) => line.msg === msg && Object.entries(match).every(([key, value]) => line[key] === value));
  return pollUntil(async () => find(), (line) => line !== undefined, { timeoutMs: 10_000 }) as Promise<Line>;
}

/** A SEP-2663 task, a synchronous call and a legacy task-augmented call, all with `SECRET` among the arguments. */
async function traffic(url: string): Promise<{ modernTask: string; legacyTask: string }> {
  const modern = new Sep2663Client(url, { token: TOKEN });
  const created = await modern.createTask('slow_compute', { seconds: 1.5, label: SECRET });
  expect(textOf((await modern.waitForStatus(created.taskId, 'completed', { intervalMs: 200 })).result)).toBe(`Computed ${SECRET} after 1.5s`);
  expect(textOf((await modern.callTool('greet', { name: SECRET })).body.result)).toBe(`Hello, ${SECRET}!`);

  const session = await LegacySession.open(url, { token: TOKEN });
  const { task } = await session.result('tools/call', { name: 'slow_compute', arguments: { seconds: 0.2, label: SECRET }, task: { ttl: 60_000 } });
  await pollUntil(() => session.result('tasks/get', { taskId: task.taskId }), (t) => t.status === 'completed', { intervalMs: 100 });
  return { modernTask: created.taskId as string, legacyTask: task.taskId as string };
}

describe('the log', () => {
  let upstream: DemoUpstreamProcess;
  let debug: ShimProcess;
  let warn: ShimProcess;
  let withArguments: ShimProcess;
  beforeAll(async () => {
    upstream = await spawnDemoUpstream(['--port', '0']);
    [debug, warn, withArguments] = await Promise.all([
      startShimProcess({ upstreamUrl: upstream.url, args: ['--tokens', tokensFile, '--log-level', 'debug'] }),
      startShimProcess({ upstreamUrl: upstream.url, args: ['--tokens', tokensFile], env: { SHIM_LOG_LEVEL: 'warn' } }),
      // At debug, where a plain call that went well is written.
      startShimProcess({ upstreamUrl: upstream.url, args: ['--tokens', tokensFile, '--log-arguments', '--log-level', 'debug'] }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([debug?.stop(), warn?.stop(), withArguments?.stop()]);
    upstream?.killGroup();
    await upstream?.exited;
  });

  it('writes a JSON line per request with method, wire, principal, client, outcome, duration and task id', async () => {
    const { modernTask, legacyTask } = await traffic(debug.url);
    await waitForLine(debug, 'request', { method: 'tasks/get', taskId: legacyTask });

    const created = requestLines(debug, { method: 'tools/call', wire: 'sep2663', taskId: modernTask });
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({
      level: 30,
      tool: 'slow_compute',
      principal: 'alice',
      clientName: 'e2e-client',
      clientVersion: '1.0.0',
      protocolVersion: '2026-07-28',
      outcome: 'ok',
    });
    expect(created[0]?.durationMs).toBeGreaterThanOrEqual(1_000);
    // Polls are debug lines; at debug they are all there, each naming its task.
    const polls = requestLines(debug, { method: 'tasks/get', wire: 'sep2663', taskId: modernTask });
    expect(polls.length).toBeGreaterThan(1);
    expect(polls.every((line) => line.level === 20 && line.principal === 'alice')).toBe(true);
    const greeted = requestLines(debug, { method: 'tools/call', tool: 'greet', outcome: 'ok' })[0];
    // A plain call that went well is a debug line, on the new wire as for a forwarded one.
    expect(greeted).toMatchObject({ level: 20, wire: 'sep2663' });
    expect(greeted?.taskId).toBeUndefined();

    expect(requestLines(debug, { method: 'initialize', wire: 'passthrough' })[0]).toMatchObject({
      level: 30,
      principal: 'alice',
      clientName: 'legacy-raw-client',
      clientVersion: '0.1.0',
      outcome: 'ok',
    });
    expect(requestLines(debug, { method: 'tools/call', wire: 'mcp-2025-11-25', taskId: legacyTask })[0]).toMatchObject({
      level: 30,
      tool: 'slow_compute',
      principal: 'alice',
      clientName: 'legacy-raw-client',
      outcome: 'ok',
    });
    expect(requestLines(debug, { method: 'tasks/get', wire: 'mcp-2025-11-25', taskId: legacyTask })[0]).toMatchObject({ level: 20, outcome: 'ok' });
    for (const line of requestLines(debug, {})) expect(typeof line.durationMs).toBe('number');
  });

  it('writes the lifecycle of a task that completes', async () => {
    const modern = new Sep2663Client(debug.url, { token: TOKEN });
    const created = await modern.createTask('slow_compute', { seconds: 1.2 });
    await modern.waitForStatus(created.taskId, 'completed', { intervalMs: 200 });
    const completed = await waitForLine(debug, 'task completed', { taskId: created.taskId });
    expect(completed).toMatchObject({ level: 30, wire: 'sep2663', tool: 'slow_compute' });
    expect(completed.ageMs).toBeGreaterThanOrEqual(1_000);
    expect(logLines(debug).find((line) => line.msg === 'task created' && line.taskId === created.taskId)).toMatchObject({ wire: 'sep2663', tool: 'slow_compute' });
  });

  it('writes no request line at warn', async () => {
    await traffic(warn.url);
    // Stopped, the process has written everything it will.
    await warn.stop();
    const lines = logLines(warn);
    expect(lines.filter((line) => line.msg === 'request' || line.msg.startsWith('task '))).toEqual([]);
    expect(lines.every((line) => line.level >= 40)).toBe(true);
  });

  it('writes tool arguments, and still no token, only with --log-arguments', async () => {
    const modern = new Sep2663Client(withArguments.url, { token: TOKEN });
    expect(textOf((await modern.callTool('greet', { name: SECRET })).body.result)).toBe(`Hello, ${SECRET}!`);
    const line = await waitForLine(withArguments, 'request', { method: 'tools/call', tool: 'greet' });
    expect(line.arguments).toEqual({ name: SECRET });
    expect(withArguments.stderr()).not.toContain(TOKEN);
    // The result, which holds the argument too, is not logged: the argument appears on this line only.
    expect(withArguments.stderr().split(SECRET)).toHaveLength(2);
  });

  it('writes the upstream failure with its cause when the upstream is gone', async () => {
    // Opened while the upstream runs: its forwarded requests go through the passthrough.
    const session = await LegacySession.open(debug.url, { token: TOKEN });
    upstream.killGroup();
    await upstream.exited;

    const modern = new Sep2663Client(debug.url, { token: TOKEN });
    expect((await modern.callTool('greet', { name: SECRET })).body.error).toBeDefined();
    const failed = await waitForLine(debug, 'upstream unreachable', { operation: 'tools/call greet' });
    expect(failed.level).toBe(50);
    expect(failed.error).toEqual(expect.any(String));
    expect(failed.cause).toMatch(GONE);

    expect((await session.post({ jsonrpc: '2.0', id: 'p1', method: 'ping' })).status).toBe(502);
    const forward = await waitForLine(debug, 'upstream unreachable', { operation: 'forward' });
    expect(forward.level).toBe(50);
    expect(`${String(forward.error)} ${String(forward.cause)}`).toMatch(GONE);
    // Lines are written asynchronously: the request's own line may follow the failure's.
    await waitForLine(debug, 'request', { method: 'ping', wire: 'passthrough', outcome: 'http_502' });
    expect(requestLines(debug, { method: 'ping', wire: 'passthrough', outcome: 'http_502' })).toHaveLength(1);

    await expect(LegacySession.open(debug.url, { token: TOKEN })).rejects.toThrow();
    const opening = await waitForLine(debug, 'upstream unreachable', { operation: 'initialize' });
    expect(`${String(opening.error)} ${String(opening.cause)}`).toMatch(GONE);
  });

  it('never writes the bearer token or a tool argument, on stdout or stderr', () => {
    // The earlier tests made the traffic; this one reads everything both shims wrote.
    for (const shim of [debug, warn]) {
      const all = `${shim.stdout()}\n${shim.stderr()}`;
      expect(all).not.toContain(TOKEN);
      expect(all).not.toContain(SECRET);
    }
    expect(logLines(debug).length).toBeGreaterThan(10);
  });
});
