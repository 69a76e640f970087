import { z } from 'zod';
import { TASK_STATUSES } from '../../core/task.js';

/**
 * What a SEP-2663 server answers (MCP 2026-07-28 and the SEP-2663 schema), for the shim as a
 * client of a SEP-2663 upstream. Loose objects: a server may add fields. `resultType` absent reads
 * as `complete` (a pre-2026 server), an unknown one is invalid (MCP 2026-07-28 schema, `resultType`).
 */
const JsonRpcErrorObject = z.looseObject({ code: z.number().int(), message: z.string(), data: z.unknown().optional() });

const InputRequestEntry = z.looseObject({ method: z.string().min(1), params: z.record(z.string(), z.unknown()) });
export const InputRequests = z.record(z.string().min(1), InputRequestEntry);

/** The `Task` fields (SEP-2663 schema); `ttlMs` and `createdAt` are read, not kept. */
const TaskFields = {
  taskId: z.string().min(1),
  statusMessage: z.string().optional(),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  ttlMs: z.number().int().nonnegative().nullable(),
  pollIntervalMs: z.number().int().positive().optional(),
};

/** A tool's result, inlined in a completed task or answered plainly. */
export const CallToolResult = z.looseObject({
  resultType: z.literal('complete').optional(),
  content: z.array(z.unknown()),
  isError: z.boolean().optional(),
});

/** `CreateTaskResult`: flat, `resultType: "task"` (SEP-2663 schema). */
export const CreateTaskResult = z.looseObject({ resultType: z.literal('task'), ...TaskFields, status: z.enum(TASK_STATUSES) });

/** An MRTR `InputRequiredResult` (MCP 2026-07-28, Patterns › MRTR): at least one of the two fields. */
export const InputRequiredResult = z
  .looseObject({ resultType: z.literal('input_required'), inputRequests: InputRequests.optional(), requestState: z.string().min(1).optional() })
  .refine((r) => r.inputRequests !== undefined || r.requestState !== undefined, 'inputRequests or requestState is required');

/** What a polymorphic `tools/call` may answer. */
export const ToolsCallAnswer = z.union([CreateTaskResult, InputRequiredResult, CallToolResult]);

/** `DetailedTask` (SEP-2663 schema), as `tasks/get` answers it: the status variant with its required field. */
export const DetailedTask = z.discriminatedUnion('status', [
  z.looseObject({ ...TaskFields, status: z.literal('working') }),
  z.looseObject({ ...TaskFields, status: z.literal('input_required'), inputRequests: InputRequests }),
  z.looseObject({ ...TaskFields, status: z.literal('completed'), result: CallToolResult }),
  z.looseObject({ ...TaskFields, status: z.literal('failed'), error: JsonRpcErrorObject }),
  z.looseObject({ ...TaskFields, status: z.literal('cancelled') }),
]);
export type DetailedTask = z.infer<typeof DetailedTask>;

/** The empty ack of `tasks/update` and `tasks/cancel` (SEP-2663): nothing in it is read. */
export const Ack = z.looseObject({ resultType: z.literal('complete').optional() });

/** `server/discover` (MCP 2026-07-28, Server › Discovery), the parts a client needs to know what the server speaks. */
export const DiscoverResult = z.looseObject({
  supportedVersions: z.array(z.string()),
  capabilities: z.looseObject({ extensions: z.record(z.string(), z.unknown()).optional() }),
});

/** One page of `tools/list`. */
export const ToolsListResult = z.looseObject({
  tools: z.array(z.looseObject({ name: z.string().min(1) })),
  nextCursor: z.string().optional(),
});
