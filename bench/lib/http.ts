import { Agent, request } from 'node:http';

/** One keep-alive agent for the bench's own (non-load) requests. */
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

export interface HttpReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export function post(url: string, headers: Record<string, string>, body: string, timeoutMs = 10_000): Promise<HttpReply> {
  return send('POST', url, headers, body, timeoutMs);
}

export function get(url: string, headers: Record<string, string> = {}, timeoutMs = 10_000): Promise<HttpReply> {
  return sendAgainOnReset('GET', url, headers, undefined, timeoutMs);
}

/** A POST of a read that changes nothing (`tasks/get`), which a client may send again, as a GET. */
export function postRead(url: string, headers: Record<string, string>, body: string, timeoutMs = 10_000): Promise<HttpReply> {
  return sendAgainOnReset('POST', url, headers, body, timeoutMs);
}

async function sendAgainOnReset(method: string, url: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number): Promise<HttpReply> {
  try {
    return await send(method, url, headers, body, timeoutMs);
  } catch (err) {
    // A kept-alive socket the server closed for idleness just as it was reused: a read is safe to send again.
    if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') throw err;
    return send(method, url, headers, body, timeoutMs);
  }
}

function send(method: string, url: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent, timeout: timeoutMs }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The JSON-RPC message of a JSON or single-event SSE answer. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function rpcOf(reply: HttpReply): any {
  const text = reply.text.trim();
  if (text.startsWith('{')) return JSON.parse(text);
  const data = text
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trim())
    .filter((l) => l.startsWith('{'));
  return data.length ? JSON.parse(data[data.length - 1]!) : undefined;
}
