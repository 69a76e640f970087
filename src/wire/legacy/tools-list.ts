import { InternalError } from '../../core/errors.js';
import type { SessionRecord } from '../../session/session-store.js';
import { errorResponse } from '../jsonrpc/message.js';
import type { JsonRpcRequest } from '../jsonrpc/message.js';
import { json, type Reply } from '../reply.js';
import { LEGACY_PROTOCOL_VERSION } from './constants.js';
import type { LegacyDeps } from './deps.js';
import { askUpstream } from './sessionless-upstream.js';

/** Our policies as 2025-11-25 `execution.taskSupport` (`auto` runs as a task when asked: optional). */
const TASK_SUPPORT = { forbidden: 'forbidden', optional: 'optional', required: 'required', auto: 'optional' } as const;

/**
 * `tools/list` in the client's upstream session, with each tool's `execution.taskSupport`
 * rewritten to the shim's policy (the shim, not the upstream, runs the tasks).
 */
export async function rewriteToolsList(deps: LegacyDeps, session: SessionRecord, request: JsonRpcRequest): Promise<Reply> {
  let answer;
  try {
    answer = await askUpstream(deps, request, {
      ...(session.upstreamSessionId ? { 'mcp-session-id': session.upstreamSessionId } : {}),
      'mcp-protocol-version': session.protocolVersion,
    });
  } catch (err) {
    deps.onUpstreamUnreachable?.('tools/list', err);
    return json(200, errorResponse(request.id, new InternalError(`Upstream unreachable: ${(err as Error).message}`)));
  }
  if (!answer.response) return json(200, errorResponse(request.id, new InternalError(`Upstream answered tools/list with HTTP ${answer.status}`)));
  if ('error' in answer.response || session.protocolVersion !== LEGACY_PROTOCOL_VERSION) return json(200, answer.response);
  const result = answer.response.result as { tools?: Array<Record<string, unknown>> };
  const tools = await Promise.all(
    (result.tools ?? []).map(async (tool) => {
      const policy = await deps.service.policyFor(String(tool.name));
      return { ...tool, execution: { ...((tool.execution as Record<string, unknown>) ?? {}), taskSupport: TASK_SUPPORT[policy.mode] } };
    }),
  );
  return json(200, { ...answer.response, result: { ...result, tools } });
}
