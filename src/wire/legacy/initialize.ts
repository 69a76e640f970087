import type { ServerResponse } from 'node:http';
import { InternalError, InvalidParamsError } from '../../core/errors.js';
import { newOpaqueId } from '../../core/ids.js';
import { errorResponse, resultResponse, type JsonRpcRequest } from '../jsonrpc/message.js';
import { json, type Reply } from '../reply.js';
import { LEGACY_PROTOCOL_VERSION, LEGACY_TASKS_CAPABILITY } from './constants.js';
import type { LegacyDeps } from './deps.js';
import { postUpstream } from './upstream-http.js';

/**
 * `initialize`: the client's request goes to the upstream as is (opening the upstream session
 * this client session maps to); the shim mints its own session id and adds the tasks
 * capability it serves on top of the upstream's.
 */
export async function initialize(deps: LegacyDeps, request: JsonRpcRequest, principal: string, res: ServerResponse): Promise<Reply> {
  const params = request.params ?? {};
  if (typeof params.protocolVersion !== 'string' || typeof params.capabilities !== 'object' || params.capabilities === null) {
    return json(200, errorResponse(request.id, new InvalidParamsError('initialize needs protocolVersion, capabilities and clientInfo')));
  }
  let answer;
  try {
    answer = await postUpstream(deps, request, {});
  } catch (err) {
    return json(502, errorResponse(request.id, new InternalError(`Upstream unreachable: ${(err as Error).message}`)));
  }
  if (!answer.response) return json(502, errorResponse(request.id, new InternalError(`Upstream answered initialize with HTTP ${answer.status}`)));
  if ('error' in answer.response) return json(200, answer.response);

  const result = answer.response.result as Record<string, unknown>;
  const version = typeof result.protocolVersion === 'string' ? result.protocolVersion : LEGACY_PROTOCOL_VERSION;
  const capabilities = { ...((result.capabilities as Record<string, unknown>) ?? {}) };
  // Tasks do not exist before 2025-11-25, so only that version hears about them.
  if (version === LEGACY_PROTOCOL_VERSION) capabilities.tasks = LEGACY_TASKS_CAPABILITY;

  const sessionId = newOpaqueId();
  const clientInfo = params.clientInfo as { name?: unknown; version?: unknown } | undefined;
  await deps.sessions.create(
    {
      sessionId,
      principal,
      protocolVersion: version,
      clientInfo:
        typeof clientInfo?.name === 'string' && typeof clientInfo.version === 'string'
          ? { name: clientInfo.name, version: clientInfo.version }
          : undefined,
      clientCapabilities: params.capabilities as Record<string, unknown>,
      upstreamSessionId: answer.sessionId,
      createdAt: Date.now(),
    },
    deps.sessionIdleTtlMs,
  );
  res.setHeader('mcp-session-id', sessionId);
  return json(200, resultResponse(request.id, { ...result, capabilities }));
}
