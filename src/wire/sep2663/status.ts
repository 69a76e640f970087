import { ErrorCode } from '../../core/errors.js';

/**
 * HTTP status per JSON-RPC error code on the 2026-07-28 Streamable HTTP wire. Errors raised while
 * validating the envelope (before the method runs: Sep2663Handler.validate) are 4xx; a handler's -32602/-32603 stays 200.
 */
const ENVELOPE_STATUS: Readonly<Record<number, number>> = {
  [ErrorCode.ParseError]: 400,
  [ErrorCode.InvalidRequest]: 400,
  [ErrorCode.HeaderMismatch]: 400,
  [ErrorCode.InvalidParams]: 400,
  [ErrorCode.UnsupportedProtocolVersion]: 400,
  [ErrorCode.MethodNotFound]: 404,
  [ErrorCode.MissingRequiredClientCapability]: 400,
};

export function httpStatusFor(code: number, stage: 'envelope' | 'handler'): number {
  if (code === ErrorCode.MissingRequiredClientCapability) return 400;
  // Too many open tasks or streams: the stateless client may retry later (docs/decisions/0006-limits.md).
  if (code === ErrorCode.LimitExceeded) return 429;
  if (stage === 'envelope') return ENVELOPE_STATUS[code] ?? 400;
  return 200;
}
