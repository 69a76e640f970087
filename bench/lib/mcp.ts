/** Request builders for the two wires the bench speaks (written from the specs, like test/support). */
import { post, rpcOf } from './http.js';

const PROTOCOL_2026 = '2026-07-28';
const PROTOCOL_2025 = '2025-11-25';
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

const NAME_FIELD: Readonly<Record<string, string>> = { 'tools/call': 'name', 'tasks/get': 'taskId', 'tasks/update': 'taskId', 'tasks/cancel': 'taskId' };

let nextId = 1;

/** Headers and body of a correct 2026-07-28 request that declares the tasks extension. */
export function sep2663(method: string, params: Record<string, unknown> = {}): { headers: Record<string, string>; body: string } {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': PROTOCOL_2026,
    'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
    'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
  };
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': PROTOCOL_2026,
    'mcp-method': method,
  };
  const field = NAME_FIELD[method];
  if (field && typeof params[field] === 'string') headers['mcp-name'] = params[field];
  const body = JSON.stringify({ jsonrpc: '2.0', id: `b${nextId++}`, method, params: { ...params, _meta: meta } });
  return { headers, body };
}

/** A 2025-11-25 JSON-RPC request body and headers for a session. */
export function legacy(method: string, params: Record<string, unknown> | undefined, sessionId?: string): { headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': PROTOCOL_2025,
  };
  if (sessionId) headers['mcp-session-id'] = sessionId;
  const message: Record<string, unknown> = { jsonrpc: '2.0', id: nextId++, method };
  if (params) message.params = params;
  return { headers, body: JSON.stringify(message) };
}

/** initialize + notifications/initialized; returns the session id. */
export async function openLegacySession(url: string, capabilities: Record<string, unknown> = {}): Promise<string> {
  const init = legacy('initialize', { protocolVersion: PROTOCOL_2025, capabilities, clientInfo: { name: 'bench', version: '1.0.0' } });
  const reply = await post(url, { ...init.headers, 'mcp-protocol-version': PROTOCOL_2025 }, init.body);
  const sessionId = reply.headers['mcp-session-id'];
  if (reply.status !== 200 || typeof sessionId !== 'string') throw new Error(`initialize at ${url} failed: ${reply.status} ${reply.text}`);
  const note = { jsonrpc: '2.0', method: 'notifications/initialized' };
  const ack = await post(url, legacy('x', undefined, sessionId).headers, JSON.stringify(note));
  if (ack.status >= 300) throw new Error(`notifications/initialized failed: ${ack.status} ${ack.text}`);
  return sessionId;
}

/** Posts a request and fails unless it answers HTTP 2xx with a JSON-RPC result. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function mustResult(url: string, req: { headers: Record<string, string>; body: string }): Promise<any> {
  const reply = await post(url, req.headers, req.body);
  const rpc = rpcOf(reply);
  if (reply.status >= 300 || !rpc || rpc.result === undefined) throw new Error(`request failed at ${url}: ${reply.status} ${reply.text.slice(0, 500)}`);
  return rpc.result;
}
