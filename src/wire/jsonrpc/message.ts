import { z } from 'zod';
import { InvalidRequestError, ParseError, type ShimError } from '../../core/errors.js';

export type JsonRpcId = string | number;

const Id = z.union([z.string(), z.number().int()]);

const Request = z.object({
  jsonrpc: z.literal('2.0'),
  id: Id,
  method: z.string().min(1),
  params: z.record(z.string(), z.unknown()).optional(),
});

const Notification = z.object({
  jsonrpc: z.literal('2.0'),
  method: z.string().min(1),
  params: z.record(z.string(), z.unknown()).optional(),
});

const Response = z.union([
  z.object({ jsonrpc: z.literal('2.0'), id: Id, result: z.record(z.string(), z.unknown()) }),
  z.object({
    jsonrpc: z.literal('2.0'),
    id: Id.nullable(),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
  }),
]);

export type JsonRpcRequest = z.infer<typeof Request>;
export type JsonRpcNotification = z.infer<typeof Notification>;
export type JsonRpcResponse = z.infer<typeof Response>;

export type JsonRpcMessage =
  | { kind: 'request'; message: JsonRpcRequest }
  | { kind: 'notification'; message: JsonRpcNotification }
  | { kind: 'response'; message: JsonRpcResponse };

/** The body as JSON, or a ParseError. */
export function parseJson(body: Buffer | string): unknown {
  try {
    return JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    throw new ParseError();
  }
}

/** One JSON-RPC message; batches and anything else are an InvalidRequestError. */
export function classify(json: unknown): JsonRpcMessage {
  if (Array.isArray(json)) throw new InvalidRequestError('batches are not supported');
  if (typeof json !== 'object' || json === null) throw new InvalidRequestError('expected a JSON object');
  const obj = json as Record<string, unknown>;
  if (obj.jsonrpc !== '2.0') throw new InvalidRequestError('jsonrpc must be "2.0"');
  if ('method' in obj) {
    if ('id' in obj) {
      if (isWellFormedRequest(obj)) return { kind: 'request', message: { jsonrpc: '2.0', id: obj.id, method: obj.method, params: obj.params } };
      const parsed = Request.safeParse(obj);
      if (!parsed.success) throw new InvalidRequestError(describe(parsed.error));
      return { kind: 'request', message: parsed.data };
    }
    const parsed = Notification.safeParse(obj);
    if (!parsed.success) throw new InvalidRequestError(describe(parsed.error));
    return { kind: 'notification', message: parsed.data };
  }
  const parsed = Response.safeParse(obj);
  if (!parsed.success) throw new InvalidRequestError('neither a request, a notification nor a response');
  return { kind: 'response', message: parsed.data };
}

/** The request id when the body got far enough to have one, so errors can echo it. */
export function idOf(json: unknown): JsonRpcId | null {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return null;
  const id = (json as Record<string, unknown>).id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : null;
}

export function errorResponse(id: JsonRpcId | null, error: ShimError): { jsonrpc: '2.0'; id: JsonRpcId | null; error: ReturnType<ShimError['toJsonRpc']> } {
  return { jsonrpc: '2.0', id, error: error.toJsonRpc() };
}

export function resultResponse(id: JsonRpcId, result: Record<string, unknown>): { jsonrpc: '2.0'; id: JsonRpcId; result: Record<string, unknown> } {
  return { jsonrpc: '2.0', id, result };
}

/**
 * The common case, checked by hand: zod's parse copies the params of every request on the hot
 * path. Anything this does not accept goes through the schema, which words the error.
 */
function isWellFormedRequest(obj: Record<string, unknown>): obj is JsonRpcRequest & Record<string, unknown> {
  const { id, method, params } = obj;
  return (
    (typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id))) &&
    typeof method === 'string' &&
    method.length > 0 &&
    (params === undefined || isRecord(params))
  );
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || 'message'}: ${i.message}`).join('; ');
}
