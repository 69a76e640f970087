import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSdkPlainUpstream, spawnSdkTaskUpstream, type DemoUpstreamProcess } from '../../support/demo-upstream-process.js';
import { LegacySession } from '../../support/legacy-client.js';
import { freePort } from '../../support/redis-server.js';
import { pollUntil, Sep2663Client, textOf } from '../../support/sep2663-client.js';
import { startShimProcess, type ShimProcess } from '../../support/shim-process.js';

/**
 * An upstream built with the official SDK (`McpServer.registerTool`, no tasks capability) lists
 * every tool `taskSupport: "forbidden"`; the policy file's `default` is what decides.
 */
let upstream: DemoUpstreamProcess;
let auto: ShimProcess;
let forbidden: ShimProcess;

beforeAll(async () => {
  upstream = await spawnSdkPlainUpstream();
  [auto, forbidden] = await Promise.all([
    startShimProcess({ upstreamUrl: upstream.url, policy: { default: 'auto', tools: { ghost_tool: 'optional' } } }),
    startShimProcess({ upstreamUrl: upstream.url, policy: { default: 'forbidden', tools: { lookup: 'optional' } } }),
  ]);
});

afterAll(async () => {
  await Promise.all([auto?.stop(), forbidden?.stop()]);
  upstream?.killGroup();
  await upstream?.exited;
});

/** The table follows the ready line once the upstream has listed its tools. */
const startLines = (shim: ShimProcess, tool: string): Promise<string> =>
  pollUntil(async () => shim.stdout(), (out) => new RegExp(`^ {4}${tool} `, 'm').test(out), { timeoutMs: 10_000, intervalMs: 50 });

describe('an official-SDK upstream without tasks, policy default auto', () => {
  it('prints each tool with its effective policy and source, and warns about a policy entry naming no tool', async () => {
    const out = await startLines(auto, 'lookup');
    expect(out).toMatch(/^ {2}version: {2}\d+\.\d+\.\d+/m);
    expect(out).toMatch(/^ {2}auth: {5}none$/m);
    expect(out).toContain('policies: 2 upstream tools; the upstream declares no tasks: the policy file, else the default (auto), applies');
    expect(out).toMatch(/^ {4}build_report +auto \(1000 ms window\) +shim +default \(upstream says forbidden\)$/m);
    expect(out).toMatch(/^ {4}lookup +auto \(1000 ms window\) +shim +default \(upstream says forbidden\)$/m);
    await pollUntil(async () => auto.stderr(), (err) => err.includes('ghost_tool'), { timeoutMs: 5_000, intervalMs: 50 });
    expect(auto.stderr()).toContain('WARNING: the policy file names tools the upstream does not have: ghost_tool');
  });

  it('turns the 3-second tool into a task for a SEP-2663 client that opted in, with its real result', async () => {
    const client = new Sep2663Client(auto.url);
    const created = await client.createTask('build_report');
    const done = await client.waitForStatus(created.taskId, ['completed', 'failed'], { timeoutMs: 15_000 });
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe('report built in 3 s');
  });

  it('keeps the quick tool synchronous for the same client', async () => {
    const result = await new Sep2663Client(auto.url).result('tools/call', { name: 'lookup', arguments: { key: 'k' } });
    expect(result.resultType).toBe('complete');
    expect(textOf(result)).toBe('value of k');
  });

  it('lists the tools to a 2025-11-25 client as optional and accepts its task-augmented call', async () => {
    const session = await LegacySession.open(auto.url);
    const { tools } = await session.result('tools/list');
    expect(tools.find((t: { name: string }) => t.name === 'build_report').execution.taskSupport).toBe('optional');
    const answer = await session.request('tools/call', { name: 'build_report', arguments: { seconds: 0.2 }, task: {} });
    expect(answer.error).toBeUndefined();
    expect(answer.result.task.status).toBe('working');
    const result = await session.result('tasks/result', { taskId: answer.result.task.taskId });
    expect(textOf(result)).toBe('report built in 0.2 s');
  });

  it('creates a task with the tasks/create dialect', async () => {
    const session = await LegacySession.open(auto.url);
    const answer = await session.request('tasks/create', { name: 'build_report', arguments: { seconds: 0.2 } });
    expect(answer.error).toBeUndefined();
    const done = await pollUntil(() => session.result('tasks/status', { taskId: answer.result.taskId }), (t) => t.status === 'done', { timeoutMs: 10_000 });
    expect(textOf(done.result)).toBe('report built in 0.2 s');
  });
});

describe('the same upstream, policy default forbidden', () => {
  it('prints the default and the policy file as sources', async () => {
    const out = await startLines(forbidden, 'lookup');
    expect(out).toMatch(/^ {4}build_report +forbidden +shim +default \(upstream says forbidden\)$/m);
    expect(out).toMatch(/^ {4}lookup +optional +shim +policy file \(upstream says forbidden\)$/m);
    expect(forbidden.stderr()).not.toContain('WARNING: the policy file names');
  });

  it('answers an opted-in SEP-2663 call synchronously', async () => {
    const result = await new Sep2663Client(forbidden.url).result('tools/call', { name: 'build_report', arguments: { seconds: 0.2 } });
    expect(result.resultType).toBe('complete');
    expect(textOf(result)).toBe('report built in 0.2 s');
  });

  it('answers -32601 to a task-augmented call from a 2025-11-25 client', async () => {
    const session = await LegacySession.open(forbidden.url);
    const answer = await session.request('tools/call', { name: 'build_report', arguments: { seconds: 0.2 }, task: {} });
    expect(answer.error.code).toBe(-32601);
  });
});

describe('an upstream that is down when the shim starts', () => {
  it('starts anyway, says the upstream is not answering, and prints the table once it answers', async () => {
    const port = await freePort();
    const shim = await startShimProcess({ upstreamUrl: `http://127.0.0.1:${port}/mcp`, policy: { default: 'auto' } });
    let late: DemoUpstreamProcess | undefined;
    try {
      await pollUntil(async () => shim.stdout(), (out) => out.includes('policies: the upstream is not answering'), { timeoutMs: 10_000, intervalMs: 50 });
      expect(shim.stdout()).toContain('the table follows when it does');
      late = await spawnSdkPlainUpstream(['--port', String(port)]);
      const out = await startLines(shim, 'build_report');
      expect(out).toContain('mcp-tasks-shim: the upstream answers now');
      expect(out).toMatch(/^ {4}build_report +auto \(1000 ms window\) +shim +default/m);
    } finally {
      await shim.stop();
      late?.killGroup();
      await late?.exited;
    }
  });
});

describe('an official-SDK upstream that declares tasks', () => {
  it('keeps its taskSupport as the policy where the policy file names no tool, despite the default', async () => {
    const tasks = await spawnSdkTaskUpstream();
    const shim = await startShimProcess({ upstreamUrl: tasks.url, policy: { default: 'auto' } });
    try {
      const out = await startLines(shim, 'greet');
      expect(out).toContain('the upstream declares tasks: its taskSupport applies where the policy file names no tool');
      expect(out).toMatch(/^ {4}greet +required +native +upstream$/m);
      // required: a SEP-2663 client that did not opt in is refused, where auto would have answered.
      const refused = await new Sep2663Client(shim.url).request('tools/call', { name: 'greet', arguments: { name: 'x' } }, { tasks: false });
      expect(refused.body.error.code).toBe(-32021);
      const session = await LegacySession.open(shim.url);
      const { tools } = await session.result('tools/list');
      expect(tools.find((t: { name: string }) => t.name === 'greet').execution.taskSupport).toBe('required');
    } finally {
      await shim.stop();
      tasks.killGroup();
      await tasks.exited;
    }
  });
});
