import { z } from 'zod';
import type { InputRequest } from './task.js';

/**
 * Structural checks for an answer to an outstanding input request, by the request's method.
 * A malformed answer is refused (naming its key) instead of being handed to the upstream.
 */
const primitive = z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]);

/** A Map: the method is the upstream's, and `constructor` must not find a property of every object. */
const ANSWER_SCHEMAS: ReadonlyMap<string, z.ZodType> = new Map<string, z.ZodType>([
  [
    'elicitation/create',
    z.looseObject({
      action: z.enum(['accept', 'decline', 'cancel']),
      content: z.record(z.string(), primitive).optional(),
    }),
  ],
  [
    'sampling/createMessage',
    z.looseObject({
      role: z.literal('assistant'),
      content: z.unknown().refine((v) => v !== undefined, 'content is required'),
      model: z.string(),
    }),
  ],
  [
    'roots/list',
    z.looseObject({
      roots: z.array(z.looseObject({ uri: z.string().startsWith('file://'), name: z.string().optional() })),
    }),
  ],
]);

/**
 * How an answer that is a JSON-RPC error (legacy wires) is kept in `inputResponses`:
 * `{ [ERROR_ANSWER]: {code, message, data?} }`.
 */
export const ERROR_ANSWER = '$jsonrpcError';

/** Returns a problem description, or undefined when the answer is well-formed for its request. */
export function checkAnswer(request: InputRequest, answer: unknown): string | undefined {
  const schema = ANSWER_SCHEMAS.get(request.method);
  if (!schema) return undefined;
  const parsed = schema.safeParse(answer);
  if (parsed.success) return undefined;
  return parsed.error.issues.map((i) => `${i.path.join('.') || 'answer'}: ${i.message}`).join('; ');
}

/** Which input kinds the creating request's capabilities allow. */
/** Whether capabilities declare any kind of input the shim can relay (elicitation, sampling, roots). */
export function declaresInput(capabilities: Record<string, unknown>): boolean {
  return capabilities.elicitation !== undefined || capabilities.sampling !== undefined || capabilities.roots !== undefined;
}

export function inputAllowed(request: InputRequest, capabilities: Record<string, unknown>): boolean {
  switch (request.method) {
    case 'elicitation/create': {
      const elicitation = capabilities.elicitation as Record<string, unknown> | undefined;
      if (!elicitation) return false;
      return request.params.mode === 'url' ? elicitation.url !== undefined : true;
    }
    case 'sampling/createMessage':
      return capabilities.sampling !== undefined;
    case 'roots/list':
      return capabilities.roots !== undefined;
    default:
      return false;
  }
}
