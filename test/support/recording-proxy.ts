import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One JSON-RPC message the shim sent to the upstream. */
export interface RecordedMessage {
  method?: string;
  id?: string | number;
  params?: Record<string, unknown>;
}

/** One HTTP request the shim sent to the upstream. */
export interface RecordedRequest {
  method: string;
  headers: IncomingHttpHeaders;
  /** The JSON-RPC messages of a POST body. */
  messages: RecordedMessage[];
}

export interface RecordingProxy {
  url: string;
  /** Every JSON-RPC message POSTed through, oldest first. */
  messages: RecordedMessage[];
  /** Every request with its headers, oldest first. */
  requests: RecordedRequest[];
  /** `tools/call` requests for `tool`. */
  toolCalls(tool: string): RecordedMessage[];
  close(): Promise<void>;
}

/**
 * An HTTP proxy in front of the upstream that records what the shim sends it, so that a test
 * can prove a tool was never called, or that a cancel reached the upstream.
 */
export async function startRecordingProxy(targetUrl: string): Promise<RecordingProxy> {
  const target = new URL(targetUrl);
  const messages: RecordedMessage[] = [];
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const recorded: RecordedRequest = { method: req.method ?? '', headers: req.headers, messages: [] };
      if (req.method === 'POST') record(body, recorded.messages);
      messages.push(...recorded.messages);
      requests.push(recorded);
      const headers: IncomingHttpHeaders = { ...req.headers, host: target.host };
      const upstream = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      res.on('close', () => upstream.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    messages,
    requests,
    toolCalls: (tool) => messages.filter((m) => m.method === 'tools/call' && m.params?.name === tool),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function record(body: Buffer, messages: RecordedMessage[]): void {
  try {
    const json = JSON.parse(body.toString('utf8')) as RecordedMessage | RecordedMessage[];
    messages.push(...(Array.isArray(json) ? json : [json]));
  } catch {
    // Not JSON: nothing to record.
  }
}
