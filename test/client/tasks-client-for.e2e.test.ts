import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import type { OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpRequestError, NoInputHandlerError, TasksClientForError, setTaskInputHandler, tasksClientFor } from '../../packages/client/src/index.js';
import { recordingFetch } from '../support/client-recording-fetch.js';
import { startShimProcess, type ShimProcess } from '../support/client-shim-process.js';

const TEAM_A = 'team-a-token-for-tasks-client-for';
const TEAM_B = 'team-b-token-for-tasks-client-for';
const STDIO_SERVER = fileURLToPath(new URL('../fixtures/client/stdio-server.mjs', import.meta.url));

let open: ShimProcess;
let guarded: ShimProcess;
const clients: Client[] = [];

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mts-client-for-'));
  const tokensFile = join(dir, 'tokens.json');
  writeFileSync(tokensFile, JSON.stringify({ [TEAM_A]: 'team-a', [TEAM_B]: 'team-b' }));
  [open, guarded] = await Promise.all([
    startShimProcess({ SHIM_POLL_INTERVAL_MS: '200' }),
    startShimProcess({ SHIM_POLL_INTERVAL_MS: '200', SHIM_TOKENS_FILE: tokensFile }),
  ]);
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await Promise.all([open?.stop(), guarded?.stop()]);
});

async function connected(url: string, opts: ConstructorParameters<typeof StreamableHTTPClientTransport>[1] = {}, capabilities = {}): Promise<Client> {
  const client = new Client({ name: 'client-for-test', version: '3.1.4' }, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), opts));
  clients.push(client);
  return client;
}

/** Just enough of an OAuth provider for a client that already holds a token; `token` can be swapped. */
function bearerProvider(initial: string): OAuthClientProvider & { token: string } {
  return {
    token: initial,
    get redirectUrl() {
      return undefined;
    },
    get clientMetadata() {
      return { redirect_uris: [] };
    },
    clientInformation: () => undefined,
    tokens(): OAuthTokens {
      return { access_token: this.token, token_type: 'Bearer' };
    },
    saveTokens: () => undefined,
    redirectToAuthorization: () => {
      throw new Error('no interactive authorization in tests');
    },
    saveCodeVerifier: () => undefined,
    codeVerifier: () => '',
  };
}

/** The code of the TasksClientForError `run` throws (undefined when it throws none). */
function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(TasksClientForError);
    return (err as TasksClientForError).code;
  }
  return undefined;
}


/** An MCP server on the deprecated HTTP+SSE transport (GET /sse, POST /messages), one McpServer per stream. */
async function startSseServer(): Promise<{ url: string; server: Server }> {
  const streams = new Map<string, SSEServerTransport>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res);
      streams.set(transport.sessionId, transport);
      void new McpServer({ name: 'sse-fixture', version: '1' }).connect(transport);
      return;
    }
    const transport = streams.get(url.searchParams.get('sessionId') ?? '');
    if (req.method === 'POST' && url.pathname === '/messages' && transport) return void transport.handlePostMessage(req, res);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

function text(result: { content: unknown[] }): string {
  return (result.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('');
}

describe('tasksClientFor on an SDK Client connected over Streamable HTTP', () => {
  it('calls tools on the endpoint the SDK client is connected to, plain results and tasks alike', async () => {
    const client = await connected(open.url);
    const tasks = tasksClientFor(client);
    expect(text(await tasks.callTool('greet', { name: 'Ada' }))).toBe('Hello, Ada!');
    expect(text(await tasks.callTool('slow_compute', { seconds: 1 }))).toMatch(/\d/);
  });

  it('returns one helper per client, and refuses options once the helper exists', async () => {
    const client = await connected(open.url);
    const first = tasksClientFor(client, { maxPollIntervalMs: 5_000 });
    expect(tasksClientFor(client)).toBe(first);
    expect(codeOf(() => tasksClientFor(client, { maxPollIntervalMs: 1_000 }))).toBe('options-after-create');
  });

  it('answers task input with the handler setTaskInputHandler gave the client, set before its helper exists or after', async () => {
    const asked: string[] = [];
    const early = await connected(open.url, {}, { elicitation: {} });
    setTaskInputHandler(early, (request) => {
      asked.push(`early ${String(request.params.message)}`);
      return { action: 'accept', content: { confirm: true } };
    });
    expect(text(await tasksClientFor(early).callTool('confirm_delete', { filename: 'a.txt' }))).toBe('Deleted a.txt');

    const late = await connected(open.url, {}, { elicitation: {} });
    const helper = tasksClientFor(late);
    setTaskInputHandler(late, (request) => {
      asked.push(`late ${String(request.params.message)}`);
      return { action: 'decline' };
    });
    expect(text(await helper.callTool('confirm_delete', { filename: 'b.txt' }))).toBe('Kept b.txt');
    expect(asked).toEqual(['early Delete a.txt?', 'late Delete b.txt?']);
  });

  it('rejects task input with NoInputHandlerError once the handler is removed', async () => {
    const client = await connected(open.url, {}, { elicitation: {} });
    setTaskInputHandler(client, () => ({ action: 'decline' }));
    setTaskInputHandler(client, undefined);
    await expect(tasksClientFor(client).callTool('confirm_delete', { filename: 'c.txt' })).rejects.toBeInstanceOf(NoInputHandlerError);
  });

  it('makes a new helper when the client reconnects over another transport', async () => {
    const client = await connected(open.url);
    const first = tasksClientFor(client);
    await client.close();
    await client.connect(new StreamableHTTPClientTransport(new URL(open.url)));
    const second = tasksClientFor(client);
    expect(second).not.toBe(first);
    expect(text(await second.callTool('greet', { name: 'Again' }))).toBe('Hello, Again!');
  });

  it('adds the headers option after the transport headers, winning on a clash', async () => {
    const recorder = recordingFetch();
    const client = await connected(open.url, { fetch: recorder.fetch, requestInit: { headers: { 'X-App-Tenant': 'blue', 'X-Trace': 'from-transport' } } });
    await tasksClientFor(client, { headers: async () => ({ 'X-Trace': 'from-option' }) }).callTool('greet', { name: 'Kay' });
    const call = recorder.of('tools/call').at(-1)!;
    expect([call.headers.get('x-app-tenant'), call.headers.get('x-trace')]).toEqual(['blue', 'from-option']);
  });

  it("sends through the transport's fetch with its requestInit headers, its clientInfo and declared input kinds, and no session id", async () => {
    const recorder = recordingFetch();
    const client = await connected(open.url, { fetch: recorder.fetch, requestInit: { headers: { 'X-App-Tenant': 'blue' } } }, { elicitation: {}, tasks: {} });
    expect(client.transport).toBeDefined();
    const tasks = tasksClientFor(client);
    const before = recorder.requests.length;
    await tasks.callTool('greet', { name: 'Grace' });

    const sent = recorder.requests.slice(before);
    expect(sent.map((r) => r.method)).toEqual(['tools/call']);
    const call = sent[0]!;
    expect(call.headers.get('x-app-tenant')).toBe('blue');
    expect(call.headers.get('mcp-protocol-version')).toBe('2026-07-28');
    expect(call.headers.get('mcp-session-id')).toBeNull();
    const meta = (call.body.params as { _meta: Record<string, unknown> })._meta;
    expect(meta['io.modelcontextprotocol/clientInfo']).toEqual({ name: 'client-for-test', version: '3.1.4' });
    expect(meta['io.modelcontextprotocol/clientCapabilities']).toEqual({ elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } });
  });

  it("authenticates with the auth provider's current token on every request, so tasks stay scoped to its principal", async () => {
    const provider = bearerProvider(TEAM_A);
    const recorder = recordingFetch();
    const client = await connected(guarded.url, { authProvider: provider, fetch: recorder.fetch });
    const tasks = tasksClientFor(client);

    const started = await tasks.startTool('slow_compute', { seconds: 1 });
    expect(started.kind).toBe('task');
    const taskId = started.kind === 'task' ? started.task.taskId : '';
    expect(recorder.of('tools/call').at(-1)!.headers.get('authorization')).toBe(`Bearer ${TEAM_A}`);
    expect((await tasks.getTask(taskId)).taskId).toBe(taskId);

    provider.token = TEAM_B;
    const foreign = await tasks.getTask(taskId).catch((err: unknown) => err);
    expect(foreign).toBeInstanceOf(McpRequestError);
    expect((foreign as McpRequestError).code).toBe(-32602);
    expect(recorder.of('tasks/get').at(-1)!.headers.get('authorization')).toBe(`Bearer ${TEAM_B}`);
  });

  it('lets requestInit headers override the auth provider, as the SDK transport does', async () => {
    const client = await connected(guarded.url, { authProvider: bearerProvider('not-a-valid-token-at-all'), requestInit: { headers: { Authorization: `Bearer ${TEAM_A}` } } });
    expect(text(await tasksClientFor(client).callTool('greet', { name: 'Lin' }))).toBe('Hello, Lin!');
  });
});

describe('tasksClientFor on clients it cannot speak for', () => {
  it('throws not-connected for a client that was never connected, or was closed', async () => {
    expect(codeOf(() => tasksClientFor(new Client({ name: 'idle', version: '1' })))).toBe('not-connected');
    const client = await connected(open.url);
    tasksClientFor(client);
    await client.close();
    expect(codeOf(() => tasksClientFor(client))).toBe('not-connected');
  });

  it('throws unsupported-transport for a client connected over stdio', async () => {
    const client = new Client({ name: 'stdio', version: '1' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [STDIO_SERVER], stderr: 'pipe' }));
    clients.push(client);
    expect(codeOf(() => tasksClientFor(client))).toBe('unsupported-transport');
  });

  it('throws unsupported-transport for a client connected over the old HTTP+SSE transport', async () => {
    const sse = await startSseServer();
    try {
      const client = new Client({ name: 'sse', version: '1' });
      await client.connect(new SSEClientTransport(new URL(`${sse.url}/sse`)));
      clients.push(client);
      expect(codeOf(() => tasksClientFor(client))).toBe('unsupported-transport');
      await client.close();
    } finally {
      sse.server.closeAllConnections();
      await new Promise((resolve) => sse.server.close(resolve));
    }
  });

  it('throws unsupported-transport for a client connected in memory', async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await new McpServer({ name: 'memory', version: '1' }).connect(serverSide);
    const client = new Client({ name: 'memory', version: '1' });
    await client.connect(clientSide);
    clients.push(client);
    expect(codeOf(() => tasksClientFor(client))).toBe('unsupported-transport');
  });
});
