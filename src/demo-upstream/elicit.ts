import type { ElicitRequestFormParams, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolContext } from './tool.js';

/**
 * Behind the shim an answer travels through the task store and a polling client, so it can
 * take far longer than the SDK's 60 s default request timeout; a cancelled call still ends the
 * wait through the signal.
 */
const ANSWER_TIMEOUT_MS = 30 * 60_000;

/** Asks on the tool call's own stream (relatedRequestId), as a 2025-11-25 client expects. */
export function elicitForm(
  { extra, server }: ToolContext,
  message: string,
  requestedSchema: ElicitRequestFormParams['requestedSchema'],
): Promise<ElicitResult> {
  return server.elicitInput(
    { mode: 'form', message, requestedSchema },
    { relatedRequestId: extra.requestId, signal: extra.signal, timeout: ANSWER_TIMEOUT_MS },
  );
}

/** The answered string field, or undefined when the user declined, cancelled or left it out. */
export function acceptedString(answer: ElicitResult, field: string): string | undefined {
  const value = answer.action === 'accept' ? answer.content?.[field] : undefined;
  return typeof value === 'string' ? value : undefined;
}
