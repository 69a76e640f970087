/**
 * Tiny error classes with stable JSON-RPC codes. Core code throws these; each wire adapter
 * renders them (code, message, data) and picks the HTTP status its spec asks for.
 */

export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  RequestCancelled: -32800,
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
  /** Ours, in the range SEP-2663 leaves to implementations' legacy use (docs/decisions/0006-limits.md). */
  LimitExceeded: -32012,
  /** Ours, same range, only ever sent on the legacy wires (docs/migration.md, "Switch the old API off"). */
  LegacyDrained: -32010,
  LegacyBrownout: -32011,
  LegacyTasksOff: -32013,
} as const;
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

export class ShimError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = new.target.name;
  }

  toJsonRpc(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

export class ParseError extends ShimError {
  constructor(message = 'Parse error: body is not valid JSON') {
    super(ErrorCode.ParseError, message);
  }
}

export class InvalidRequestError extends ShimError {
  constructor(message: string) {
    super(ErrorCode.InvalidRequest, `Invalid Request: ${message}`);
  }
}

export class MethodNotFoundError extends ShimError {
  constructor(method: string, why?: string) {
    super(ErrorCode.MethodNotFound, why ? `Method not found: ${method} (${why})` : `Method not found: ${method}`);
  }
}

export class InvalidParamsError extends ShimError {
  constructor(message: string, data?: unknown) {
    super(ErrorCode.InvalidParams, message, data);
  }
}

/**
 * Unknown, expired and foreign tasks all raise this one error with one message, so that no
 * answer tells an attacker which of the three it hit.
 */
export class TaskNotFoundError extends InvalidParamsError {
  static readonly MESSAGE = 'Failed to retrieve task: Task not found';
  constructor() {
    super(TaskNotFoundError.MESSAGE);
  }
}

export class InternalError extends ShimError {
  constructor(message = 'Internal error', data?: unknown) {
    super(ErrorCode.InternalError, message, data);
  }
}

/** The store or another dependency is briefly unreachable; the client may retry. */
export class UnavailableError extends InternalError {
  constructor(what: string) {
    super(`${what} is unavailable, retry later`, { retryable: true });
  }
}

export class HeaderMismatchError extends ShimError {
  constructor(message: string) {
    super(ErrorCode.HeaderMismatch, `Header mismatch: ${message}`);
  }
}

export class MissingCapabilityError extends ShimError {
  constructor(requiredCapabilities: Record<string, unknown>, message = 'Missing required client capability') {
    super(ErrorCode.MissingRequiredClientCapability, message, { requiredCapabilities });
  }
}

export class UnsupportedVersionError extends ShimError {
  constructor(requested: string, supported: readonly string[]) {
    super(ErrorCode.UnsupportedProtocolVersion, `Unsupported protocol version: ${requested}`, {
      supported: [...supported],
      requested,
    });
  }
}

/** What a limit counts: a principal's open tasks, streams or legacy sessions, or a replica's unsent stream bytes. */
export type LimitKind = 'tasks' | 'streams' | 'sessions' | 'buffered';

/** A principal holds as many open tasks, streams or sessions as it may (or a replica is full); retry later. */
export class LimitExceededError extends ShimError {
  constructor(what: LimitKind, limit: number, open: number) {
    super(
      ErrorCode.LimitExceeded,
      what === 'buffered'
        ? `Too many unsent stream bytes: this replica holds at most ${limit} for slow readers; retry shortly`
        : `Too many open ${what}: this principal may hold ${limit} at once; retry when one of them ends`,
      { limit, open },
    );
  }
}

/** The upstream answered a call with a JSON-RPC error; it is carried to the client unchanged. */
export class UpstreamRpcError extends ShimError {}

/** The upstream answered, but not with the MCP message it had to send (garbage, a wrong shape). */
export class UpstreamProtocolError extends InternalError {}

/**
 * The legacy tasks API is switched off (`--legacy off`): an old-wire task request gets this, under
 * HTTP 410, and the message names the migration guide. Tasks created before stay readable on the
 * SEP-2663 wire until their TTL.
 */
export class LegacyTasksOffError extends ShimError {
  constructor(guideUrl: string | undefined, data?: Record<string, unknown>) {
    super(
      ErrorCode.LegacyTasksOff,
      'The legacy MCP tasks API is switched off on this server: move this client to MCP 2026-07-28 with the SEP-2663 ' +
        'tasks extension (docs/migration.md). Tasks created before stay readable there with tasks/get until they expire.' +
        (guideUrl ? ` Migration guide: ${guideUrl}` : ''),
      { reason: 'legacy-off', ...data },
    );
  }
}
