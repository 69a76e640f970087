import {
  CompleteResultSchema,
  GetPromptResultSchema,
  ListPromptsResultSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesResultSchema,
  ReadResourceResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';

export interface TranslatedRoute {
  /** The result's shape, on both eras: an upstream answer that fails it is the upstream's fault. */
  schema: z.ZodType;
  /** The 2026-07-28 cache hint a result of this method carries (MCP 2026-07-28, Server › Discovery: `ttlMs` and `cacheScope`). */
  cache?: 'public' | 'private';
}

/**
 * The core MCP methods the shim carries between eras unchanged but for the envelope: a
 * 2026-07-28 client's to a 2025-era upstream, a 2025-11-25 session's to a 2026-07-28 upstream.
 * Method names come from the wire, so the table is a Map: on a plain object, `constructor` or
 * `toString` would name a property of its prototype.
 */
export const TRANSLATED: ReadonlyMap<string, TranslatedRoute> = new Map<string, TranslatedRoute>([
  ['resources/list', { schema: ListResourcesResultSchema, cache: 'public' }],
  ['resources/templates/list', { schema: ListResourceTemplatesResultSchema, cache: 'public' }],
  ['resources/read', { schema: ReadResourceResultSchema, cache: 'private' }],
  ['prompts/list', { schema: ListPromptsResultSchema, cache: 'public' }],
  ['prompts/get', { schema: GetPromptResultSchema }],
  ['completion/complete', { schema: CompleteResultSchema }],
]);
