import { z } from 'zod';
import { MAX_TASK_ID_LENGTH, TASK_ID_TOO_LONG } from '../../core/limits.js';
import { isRecord } from '../jsonrpc/message.js';
import { TaskIdString } from '../task-id.js';
import { META } from './constants.js';

/**
 * Params of the 2026-07-28 methods the shim answers itself, compiled once. Loose objects:
 * unknown fields (like the legacy `params.task`) are ignored, as the spec asks.
 */
const Meta = z.looseObject({
  [META.protocolVersion]: z.string(),
  [META.clientCapabilities]: z.record(z.string(), z.unknown()),
  [META.clientInfo]: z.looseObject({ name: z.string(), version: z.string() }).optional(),
});

/** Step 3 of the order of checks (docs/architecture.md): the two required `_meta` keys. */
const RequestMeta = z.looseObject({ _meta: Meta });
type RequestMeta = z.infer<typeof Meta>;

/**
 * The `_meta` of a request, or undefined when it lacks a required key. Checked by hand first:
 * every request carries it, and zod's parse would copy it each time.
 */
export function readMeta(params: Record<string, unknown>): RequestMeta | undefined {
  const meta = params._meta;
  if (isRecord(meta) && typeof meta[META.protocolVersion] === 'string' && isRecord(meta[META.clientCapabilities])) {
    const info = meta[META.clientInfo];
    if (info === undefined || (isRecord(info) && typeof info.name === 'string' && typeof info.version === 'string')) return meta as RequestMeta;
  }
  const parsed = RequestMeta.safeParse(params);
  return parsed.success ? parsed.data._meta : undefined;
}

/** A well-formed `taskId` param without zod (the tasks/get hot path); undefined sends the caller to the schema for the error. */
export function plainTaskId(params: Record<string, unknown>): string | undefined {
  const taskId = params.taskId;
  return typeof taskId === 'string' && taskId.length > 0 && taskId.length <= MAX_TASK_ID_LENGTH ? taskId : undefined;
}

/**
 * The params of a plain tools/call (a name, maybe arguments, no MRTR retry) without zod, which
 * copies them; undefined sends the caller to `ToolsCallParams`, which also words any error.
 */
export function plainToolsCall(params: Record<string, unknown>): z.infer<typeof ToolsCallParams> | undefined {
  const { name, arguments: args } = params;
  if (typeof name !== 'string' || name.length === 0 || (args !== undefined && !isRecord(args))) return undefined;
  if (params.inputResponses !== undefined || params.requestState !== undefined) return undefined;
  return params as z.infer<typeof ToolsCallParams>;
}

export const ToolsCallParams = z.looseObject({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).optional(),
  /** An MRTR retry (MCP 2026-07-28, Patterns › MRTR): the answers, and the state the shim handed out with the question. */
  inputResponses: z.record(z.string(), z.unknown()).optional(),
  requestState: z.string().min(1).max(4096).optional(),
});

export const TasksUpdateParams = z.looseObject({
  taskId: TaskIdString,
  inputResponses: z.record(z.string(), z.unknown()),
});

export const ListenParams = z.looseObject({
  notifications: z
    .looseObject({
      // An id that is not ours is simply not acknowledged (SEP-2663, `subscriptions/listen`), not an error; one too long to
      // be anybody's is a malformed param, like too many ids (docs/decisions/0006-limits.md).
      taskIds: z.array(z.string().max(MAX_TASK_ID_LENGTH, TASK_ID_TOO_LONG)).optional(),
    })
    .optional(),
});
