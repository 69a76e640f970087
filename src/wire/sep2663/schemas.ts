import { z } from 'zod';
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

/** Step 3 of §19: the two required `_meta` keys. */
export const RequestMeta = z.looseObject({ _meta: Meta });
export type RequestMeta = z.infer<typeof Meta>;

export const ToolsCallParams = z.looseObject({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).optional(),
  /** An MRTR retry (§7): the answers, and the state the shim handed out with the question. */
  inputResponses: z.record(z.string(), z.unknown()).optional(),
  requestState: z.string().min(1).max(4096).optional(),
});

export const TaskIdParams = z.looseObject({
  taskId: z.string().min(1).max(256),
});

export const TasksUpdateParams = z.looseObject({
  taskId: z.string().min(1).max(256),
  inputResponses: z.record(z.string(), z.unknown()),
});

export const ListenParams = z.looseObject({
  notifications: z
    .looseObject({
      // Any string: an id that cannot be ours is simply not acknowledged (§17), not an error.
      taskIds: z.array(z.string()).optional(),
    })
    .optional(),
});

export const CursorParams = z.looseObject({ cursor: z.string().optional() });
