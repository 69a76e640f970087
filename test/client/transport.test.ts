import { describe, expect, it } from 'vitest';
import { InvalidAnswerError, McpHttpError, McpRequestError, TasksClient } from '../../packages/client/src/index.js';

type Handler = (body: Record<string, unknown>, headers: Headers) => Response | Promise<Response>;

/** A fake endpoint: records every request and answers through `handler`. */
function fakeServer(handler: Handler) {
  const seen: Array<{ body: Record<string, unknown>; headers: Headers }> = [];
  const fetchImpl: typeof fetch = async (_input, init) => {
    const body = JSON.parse(String(init?.body)) as Record<string, unknown>;
    const headers = new Headers(init?.headers);
    seen.push({ body, headers });
    return handler(body, headers);
  };
  return { fetch: fetchImpl, seen };
}

const json = (value: unknown, status = 200) => new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } });
const sse = (events: string) => new Response(events, { headers: { 'content-type': 'text/event-stream' } });
const ok = (id: unknown, result: Record<string, unknown>) => ({ jsonrpc: '2.0', id, result });
const TEXT = { content: [{ type: 'text', text: 'hi' }] };

describe('the wire of each request', () => {
  it('sends the 2026-07-28 headers and _meta, merging user headers and capabilities', async () => {
    const server = fakeServer((body) => json(ok(body.id, { resultType: 'complete', ...TEXT })));
    let calls = 0;
    const client = new TasksClient({
      url: 'http://mcp.test/mcp',
      fetch: server.fetch,
      headers: async () => ({ Authorization: `Bearer t${++calls}`, 'mcp-method': 'spoofed' }),
      clientInfo: { name: 'app', version: '9' },
      capabilities: { elicitation: {}, extensions: { 'example/other': { a: 1 } } },
    });
    await client.callTool('greet', { name: 'x' });
    await client.callTool('greet', { name: 'y' });

    const [first, second] = server.seen;
    expect(first!.headers.get('authorization')).toBe('Bearer t1');
    expect(second!.headers.get('authorization')).toBe('Bearer t2');
    expect(first!.headers.get('mcp-method')).toBe('tools/call');
    expect(first!.headers.get('content-type')).toBe('application/json');
    expect(first!.headers.get('accept')).toBe('application/json, text/event-stream');
    expect(first!.body.id).not.toBe(second!.body.id);
    expect((first!.body.params as { _meta: unknown })._meta).toEqual({
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {
        elicitation: {},
        extensions: { 'example/other': { a: 1 }, 'io.modelcontextprotocol/tasks': {} },
      },
      'io.modelcontextprotocol/clientInfo': { name: 'app', version: '9' },
    });
  });

  it.each([
    ['plain', 'plain'],
    ['météo', '=?base64?bcOpdMOpbw==?='],
    [' lead', '=?base64?IGxlYWQ=?='],
    ['=?base64?x?=', '=?base64?PT9iYXNlNjQ/eD89?='],
  ])('encodes Mcp-Name %j as %j', async (name, header) => {
    const server = fakeServer((body) => json(ok(body.id, TEXT)));
    await new TasksClient({ url: 'http://mcp.test/mcp', fetch: server.fetch }).callTool(name);
    expect(server.seen[0]!.headers.get('mcp-name')).toBe(header);
  });

  it('puts Mcp-Name = taskId on tasks/*, and none on server/discover', async () => {
    const server = fakeServer((body) => json(ok(body.id, {})));
    const client = new TasksClient({ url: 'http://mcp.test/mcp', fetch: server.fetch });
    await client.updateTask('t-1', { k: { action: 'decline' } });
    await client.cancelTask('t-1');
    await client.discover();
    expect(server.seen.map((s) => [s.headers.get('mcp-method'), s.headers.get('mcp-name')])).toEqual([
      ['tasks/update', 't-1'],
      ['tasks/cancel', 't-1'],
      ['server/discover', null],
    ]);
    expect(server.seen[0]!.body.params).toMatchObject({ taskId: 't-1', inputResponses: { k: { action: 'decline' } } });
  });
});

describe('reading answers', () => {
  it('takes the response out of an event stream that carries notifications first', async () => {
    const server = fakeServer((body) =>
      sse(
        `: hi\n\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\n\n` +
          `data: ${JSON.stringify(ok(body.id, { resultType: 'complete', content: [{ type: 'text', text: 'streamed' }] }))}\n\n`,
      ),
    );
    const result = await new TasksClient({ url: 'http://mcp.test/mcp', fetch: server.fetch }).callTool('x');
    expect(result).toEqual({ content: [{ type: 'text', text: 'streamed' }] });
  });

  it('returns without waiting for the end of a stream that stays open after the response', async () => {
    const server = fakeServer((body) => {
      const encoder = new TextEncoder();
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(encoder.encode(`data: ${JSON.stringify(ok(body.id, TEXT))}\n\n`));
          // never closed
        },
      });
      return new Response(stream, { headers: { 'content-type': 'text/event-stream' } });
    });
    await expect(new TasksClient({ url: 'http://mcp.test/mcp', fetch: server.fetch }).callTool('x')).resolves.toMatchObject(TEXT);
  });

  it('treats an absent resultType as complete and rejects an unknown one', async () => {
    const answer: { resultType?: string } = {};
    const server = fakeServer((body) => json(ok(body.id, { ...TEXT, ...answer })));
    const client = new TasksClient({ url: 'http://mcp.test/mcp', fetch: server.fetch });
    await expect(client.callTool('x')).resolves.toEqual(TEXT);
    answer.resultType = 'mystery';
    await expect(client.callTool('x')).rejects.toThrow(InvalidAnswerError);
  });

  it('maps a JSON-RPC error with its HTTP status to McpRequestError', async () => {
    const server = fakeServer((body) =>
      json({ jsonrpc: '2.0', id: body.id, error: { code: -32021, message: 'declare it', data: { requiredCapabilities: {} } } }, 400),
    );
    const error = await new TasksClient({ url: 'http://mcp.test/mcp', fetch: server.fetch }).callTool('x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpRequestError);
    expect(error).toMatchObject({ code: -32021, httpStatus: 400, method: 'tools/call', data: { requiredCapabilities: {} }, message: 'declare it' });
  });

  it('maps an HTTP failure without a JSON-RPC body to McpHttpError', async () => {
    const server = fakeServer(() => new Response('<html>nope</html>', { status: 401, statusText: 'Unauthorized' }));
    const error = await new TasksClient({ url: 'http://mcp.test/mcp', fetch: server.fetch }).getTask('t').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpHttpError);
    expect(error).toMatchObject({ httpStatus: 401, method: 'tasks/get' });
  });

  it('rejects a task snapshot with an unknown status', async () => {
    const server = fakeServer((body) =>
      json(ok(body.id, { resultType: 'complete', taskId: 't', status: 'done', createdAt: 'x', lastUpdatedAt: 'x', ttlMs: null })),
    );
    await expect(new TasksClient({ url: 'http://mcp.test/mcp', fetch: server.fetch }).getTask('t')).rejects.toThrow('unknown task status "done"');
  });
});

describe('Mcp-Param headers', () => {
  it('learns x-mcp-header arguments from tools/list after a -32020 and retries once', async () => {
    const server = fakeServer((body, headers) => {
      if (body.method === 'tools/list') {
        return json(
          ok(body.id, {
            tools: [{ name: 'deploy', inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, n: { type: 'integer', 'x-mcp-header': 'N' } } } }],
          }),
        );
      }
      if (headers.get('mcp-param-region') === null) {
        return json({ jsonrpc: '2.0', id: body.id, error: { code: -32020, message: 'Mcp-Param-Region header is required' } }, 400);
      }
      return json(ok(body.id, TEXT));
    });
    const client = new TasksClient({ url: 'http://mcp.test/mcp', fetch: server.fetch });
    await client.callTool('deploy', { region: 'eu-wést', n: 42 });
    await client.callTool('deploy', { region: 'us' });

    expect(server.seen.map((s) => s.body.method)).toEqual(['tools/call', 'tools/list', 'tools/call', 'tools/call']);
    expect(server.seen[2]!.headers.get('mcp-param-region')).toBe(`=?base64?${Buffer.from('eu-wést').toString('base64')}?=`);
    expect(server.seen[2]!.headers.get('mcp-param-n')).toBe('42');
    expect(server.seen[3]!.headers.get('mcp-param-region')).toBe('us');
    expect(server.seen[3]!.headers.get('mcp-param-n')).toBeNull();
  });

  it('does not retry a -32020 that no known header explains', async () => {
    const server = fakeServer((body) =>
      body.method === 'tools/list' ? json(ok(body.id, { tools: [] })) : json({ jsonrpc: '2.0', id: body.id, error: { code: -32020, message: 'mismatch' } }, 400),
    );
    await expect(new TasksClient({ url: 'http://mcp.test/mcp', fetch: server.fetch }).callTool('x')).rejects.toMatchObject({ code: -32020 });
    expect(server.seen.map((s) => s.body.method)).toEqual(['tools/call', 'tools/list']);
  });
});
