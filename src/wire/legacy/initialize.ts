import { InternalError, InvalidParamsError, LimitExceededError } from '../../core/errors.js';
import { newOpaqueId } from '../../core/ids.js';
import { errorResponse, resultResponse, type JsonRpcRequest } from '../jsonrpc/message.js';
import { json, type Reply } from '../reply.js';
import { LEGACY_PROTOCOL_VERSION, LEGACY_TASKS_CAPABILITY } from './constants.js';
import type { LegacyDeps } from './deps.js';
import { sessionHoldUntil } from './session-reaper.js';
import { askUpstream } from './sessionless-upstream.js';

/**
 * `initialize`: the client's request goes to the upstream as is (opening the upstream session
 * this client session maps to), or is answered from `server/discover` when the upstream has no
 * sessions; the shim mints its own session id and adds the tasks capability it serves on top of
 * the upstream's. The principal's session count is checked
 * before the upstream hears of it.
 */
export async function initialize(deps: LegacyDeps, request: JsonRpcRequest, principal: string): Promise<Reply> {
  const params = request.params ?? {};
  if (typeof params.protocolVersion !== 'string' || typeof params.capabilities !== 'object' || params.capabilities === null) {
    return json(200, errorResponse(request.id, new InvalidParamsError('initialize needs protocolVersion, capabilities and clientInfo')));
  }
  const sessionId = newOpaqueId();
  const { service } = deps;
  try {
    await service.admitSession(principal, sessionId, sessionHoldUntil(Date.now() + deps.sessionIdleTtlMs, deps.sessionIdleTtlMs));
  } catch (err) {
    // No session to answer in: like a refused GET stream, HTTP 429 (docs/decisions/0006-limits.md).
    if (err instanceof LimitExceededError) return json(429, errorResponse(request.id, err));
    throw err;
  }
  const release = (): void => void service.releaseSession(principal, sessionId).catch(() => undefined);
  let opened: { reply: Reply; created: boolean };
  try {
    opened = await openSession(deps, request, principal, sessionId);
  } catch (err) {
    release();
    throw err;
  }
  if (!opened.created) release();
  return opened.reply;
}

async function openSession(deps: LegacyDeps, request: JsonRpcRequest, principal: string, sessionId: string): Promise<{ reply: Reply; created: boolean }> {
  const params = request.params ?? {};
  const refused = (reply: Reply): { reply: Reply; created: boolean } => ({ reply, created: false });
  let answer;
  try {
    answer = await askUpstream(deps, request, {});
  } catch (err) {
    deps.onUpstreamUnreachable?.('initialize', err);
    return refused(json(502, errorResponse(request.id, new InternalError(`Upstream unreachable: ${(err as Error).message}`))));
  }
  if (!answer.response) return refused(json(502, errorResponse(request.id, new InternalError(`Upstream answered initialize with HTTP ${answer.status}`))));
  if ('error' in answer.response) return refused(json(200, answer.response));

  const result = answer.response.result as Record<string, unknown>;
  const version = typeof result.protocolVersion === 'string' ? result.protocolVersion : LEGACY_PROTOCOL_VERSION;
  const capabilities = { ...((result.capabilities as Record<string, unknown>) ?? {}) };
  // Tasks do not exist before 2025-11-25, so only that version hears about them.
  if (version === LEGACY_PROTOCOL_VERSION) capabilities.tasks = LEGACY_TASKS_CAPABILITY;

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
  return { reply: json(200, resultResponse(request.id, { ...result, capabilities }), { 'mcp-session-id': sessionId }), created: true };
}
