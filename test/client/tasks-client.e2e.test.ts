import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  McpRequestError,
  MemoryTaskIdStore,
  NoInputHandlerError,
  TaskFailedError,
  TasksClient,
  type InputRequestHandler,
  type TaskSnapshot,
  type TaskStatusUpdate,
} from '../../packages/client/src/index.js';
import { recordingFetch } from '../support/client-recording-fetch.js';
import { startShimProcess, type ShimProcess } from '../support/client-shim-process.js';

let shim: ShimProcess;

beforeAll(async () => {
  shim = await startShimProcess({ SHIM_POLL_INTERVAL_MS: '200' });
});

afterAll(async () => {
  await shim?.stop();
});

function client(extra: Partial<ConstructorParameters<typeof TasksClient>[0]> = {}): TasksClient {
  return new TasksClient({ url: shim.url, capabilities: { elicitation: {} }, ...extra });
}

function text(result: { content: unknown[] }): string {
  return (result.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('');
}

/** Which of multi_input's two questions a request is, by its schema. */
function field(request: { params: Record<string, unknown> }): string {
  const schema = request.params.requestedSchema as { properties: Record<string, unknown> };
  return Object.keys(schema.properties)[0]!;
}

describe('TasksClient against the running shim', () => {
  it('returns a plain result as is, with the 2026-07-28 headers and the tasks extension declared', async () => {
    const recorder = recordingFetch();
    const result = await client({ fetch: recorder.fetch }).callTool('greet', { name: 'Ada' });

    expect(text(result)).toBe('Hello, Ada!');
    expect(result).not.toHaveProperty('resultType');
    expect(recorder.requests.map((r) => r.method)).toEqual(['tools/call']);
    const [call] = recorder.requests;
    expect(call!.headers.get('mcp-protocol-version')).toBe('2026-07-28');
    expect(call!.headers.get('mcp-method')).toBe('tools/call');
    expect(call!.headers.get('mcp-name')).toBe('greet');
    const meta = (call!.body.params as { _meta: Record<string, unknown> })._meta;
    expect(meta['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28');
    expect(meta['io.modelcontextprotocol/clientCapabilities']).toEqual({
      elicitation: {},
      extensions: { 'io.modelcontextprotocol/tasks': {} },
    });
  });

  it('encodes a non-ASCII Mcp-Name so the server accepts the header', async () => {
    const recorder = recordingFetch();
    const error = await client({ fetch: recorder.fetch }).callTool('météo').catch((err: unknown) => err);
    expect(recorder.requests[0]!.headers.get('mcp-name')).toBe('=?base64?bcOpdMOpbw==?=');
    // Whatever the server says about an unknown tool, it is not a header mismatch.
    if (error instanceof McpRequestError) expect(error.code).not.toBe(-32020);
  });

  it('drives a task to completion, reporting creation and status changes', async () => {
    const store = new MemoryTaskIdStore();
    const created: TaskSnapshot[] = [];
    const updates: TaskStatusUpdate[] = [];
    let storedWhileRunning: string[] = [];
    const result = await client({ taskStore: store }).callTool(
      'slow_compute',
      { seconds: 2 },
      {
        onTaskCreated: (task) => created.push(task),
        onStatus: (update) => {
          updates.push(update);
          if (update.phase === 'working') void store.list().then((entries) => (storedWhileRunning = entries.map((e) => e.taskId)));
        },
      },
    );

    expect(text(result)).toBe('Computed result after 2s');
    expect(result).not.toHaveProperty('resultType');
    expect(created).toHaveLength(1);
    expect(created[0]!.status).toBe('working');
    expect(storedWhileRunning).toEqual([created[0]!.taskId]);
    expect(updates[0]!.phase).toBe('working');
    expect(updates.at(-1)!.phase).toBe('completed');
    expect(updates.every((u) => u.taskId === created[0]!.taskId)).toBe(true);
    expect(await store.list()).toEqual([]);
  });

  it.each([
    [{ action: 'accept', content: { confirm: true } }, 'Deleted report.txt'],
    [{ action: 'decline' }, 'Kept report.txt'],
  ])('answers an input request (%j) and returns the result', async (answer, expected) => {
    const asked: Array<{ key: string; method: string; message: unknown }> = [];
    const phases: string[] = [];
    const result = await client().callTool(
      'confirm_delete',
      { filename: 'report.txt' },
      {
        onInputRequest: (request) => {
          asked.push({ key: request.key, method: request.method, message: request.params.message });
          return answer;
        },
        onStatus: (update) => phases.push(update.phase),
      },
    );
    expect(text(result)).toBe(expected);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ method: 'elicitation/create', message: 'Delete report.txt?' });
    expect(phases).toContain('input_required');
  });

  it('the call-level handler overrides the client-level one', async () => {
    const clientLevel: InputRequestHandler = () => ({ action: 'accept', content: { confirm: true } });
    const result = await client({ onInputRequest: clientLevel }).callTool(
      'confirm_delete',
      { filename: 'a.txt' },
      { onInputRequest: () => ({ action: 'decline' }) },
    );
    expect(text(result)).toBe('Kept a.txt');
  });

  it('sends partial answers as they come: the two questions of multi_input in separate updates', async () => {
    const recorder = recordingFetch();
    let onlyColorLeft!: () => void;
    const colorAlone = new Promise<void>((resolve) => (onlyColorLeft = resolve));
    const result = await client({ fetch: recorder.fetch }).callTool(
      'multi_input',
      {},
      {
        onStatus: (update) => {
          const keys = Object.values(update.inputRequests ?? {});
          // The server has taken the name and still waits for the colour: a poll after the first update.
          if (update.status === 'input_required' && keys.length === 1 && field(keys[0]!) === 'color') onlyColorLeft();
        },
        onInputRequest: async (request) => {
          if (field(request) === 'name') return { action: 'accept', content: { name: 'Ada' } };
          await colorAlone;
          return { action: 'accept', content: { color: 'teal' } };
        },
      },
    );

    expect(text(result)).toBe('Ada likes teal');
    const updates = recorder.of('tasks/update').map((r) => Object.keys((r.body.params as { inputResponses: object }).inputResponses));
    expect(updates).toHaveLength(2);
    expect(updates.every((keys) => keys.length === 1)).toBe(true);
    expect(new Set(updates.flat()).size).toBe(2);
    for (const update of recorder.of('tasks/update')) expect(update.headers.get('mcp-name')).toBe((update.body.params as { taskId: string }).taskId);
  });

  it('never sends an answered key twice, even while polls still show it', async () => {
    // A lagging replica: after the answer is acked, the next few tasks/get still show the old snapshot.
    const recorder = recordingFetch();
    let staleBody: string | undefined;
    let staleLeft = 0;
    const lagging: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init?.body)) as { id: number; method: string };
      if (body.method === 'tasks/get' && staleBody !== undefined && staleLeft > 0) {
        staleLeft--;
        await recorder.fetch(input, init); // counted, answer discarded
        const stale = { ...(JSON.parse(staleBody) as object), id: body.id };
        return new Response(JSON.stringify(stale), { status: 200, headers: { 'content-type': 'application/json' } });
      }
      const response = await recorder.fetch(input, init);
      if (body.method === 'tasks/update') staleLeft = 3;
      if (body.method === 'tasks/get') {
        const copy = await response.clone().text();
        if (copy.includes('"input_required"')) staleBody = copy;
      }
      return response;
    };
    const asked: string[] = [];
    const result = await client({ fetch: lagging }).callTool(
      'confirm_delete',
      { filename: 'b.txt' },
      {
        onInputRequest: (request) => {
          asked.push(request.key);
          return { action: 'accept', content: { confirm: true } };
        },
      },
    );
    expect(text(result)).toBe('Deleted b.txt');
    expect(asked).toHaveLength(1);
    expect(recorder.of('tasks/update')).toHaveLength(1);
    expect(staleLeft).toBe(0);
  });

  it('returns a tool error (isError) as a result, not a throw', async () => {
    const result = await client().callTool('failing_job');
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('simulated failure');
  });

  it('rejects with TaskFailedError when the task fails with a JSON-RPC error', async () => {
    const store = new MemoryTaskIdStore();
    const error = await client({ taskStore: store })
      .callTool('protocol_error_job')
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(TaskFailedError);
    expect((error as TaskFailedError).code).toBe(-32603);
    expect((error as TaskFailedError).taskId).toEqual(expect.any(String));
    expect(await store.list()).toEqual([]);
  });

  it('without a handler, rejects naming the key and leaves the task running', async () => {
    const store = new MemoryTaskIdStore();
    const helper = new TasksClient({ url: shim.url, capabilities: { elicitation: {} }, taskStore: store });
    let taskId = '';
    const error = await helper
      .callTool('confirm_delete', { filename: 'c.txt' }, { onTaskCreated: (task) => (taskId = task.taskId) })
      .catch((err: unknown) => err);

    expect(error).toBeInstanceOf(NoInputHandlerError);
    const key = (error as NoInputHandlerError).key;
    expect((error as Error).message).toContain(`"${key}"`);
    const task = await helper.getTask(taskId);
    expect(task.status).toBe('input_required');
    expect(Object.keys(task.inputRequests!)).toEqual([key]);
    expect((await store.list()).map((e) => e.taskId)).toEqual([taskId]);

    // Answered later, by a driver with a handler.
    const result = await helper.waitForTask(taskId, { onInputRequest: () => ({ action: 'decline' }) });
    expect(text(result)).toBe('Kept c.txt');
    expect(await store.list()).toEqual([]);
  });

  it('an unknown task id is an McpRequestError (-32602) and leaves the store', async () => {
    const store = new MemoryTaskIdStore();
    await store.save({ taskId: 'no-such-task', tool: 'slow_compute', createdAt: new Date().toISOString() });
    const helper = client({ taskStore: store });
    const error = await helper.waitForTask('no-such-task').catch((err: unknown) => err);
    expect(error).toBeInstanceOf(McpRequestError);
    expect((error as McpRequestError).code).toBe(-32602);
    expect((error as McpRequestError).httpStatus).toBe(200);
    expect(await store.list()).toEqual([]);
  });

  it('discover shows the tasks extension', async () => {
    const discovered = await client().discover();
    expect(discovered.capabilities).toMatchObject({ extensions: { 'io.modelcontextprotocol/tasks': {} } });
  });
});
