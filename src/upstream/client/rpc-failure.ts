import { ShimError, UnavailableError, UpstreamProtocolError, UpstreamRpcError } from '../../core/errors.js';
import { AnswerTooLargeError, type Answer } from './answer-reader.js';

/** The upstream no longer knows the session (HTTP 404): nothing of the request ran, a new session may carry it. */
export class SessionGoneError extends UnavailableError {
  constructor(method: string) {
    super(`upstream (${method}: the upstream no longer knows the session)`);
  }
}

/**
 * The result of an answer, or what went wrong, named so that the caller knows whose fault it is:
 * the upstream's JSON-RPC error is its answer (UpstreamRpcError); an HTTP failure without one
 * means it could not answer (UnavailableError; SessionGoneError for a lost session); an answer
 * that is not a JSON-RPC response carrying an object is garbage (UpstreamProtocolError).
 */
export function resultOf(method: string, answer: Answer, inSession: boolean): Record<string, unknown> {
  const { status, response } = answer;
  if (status === 404 && inSession) throw new SessionGoneError(method);
  if (response && 'error' in response) {
    const error = response.error as { code?: unknown; message?: unknown; data?: unknown } | null;
    if (typeof error?.code === 'number' && typeof error.message === 'string') throw new UpstreamRpcError(error.code, error.message, error.data);
    throw new UpstreamProtocolError(`the upstream answered ${method} with a malformed JSON-RPC error`);
  }
  if (status < 200 || status > 299) throw new UnavailableError(`upstream (${method}: HTTP ${status})`);
  const result = response?.result;
  if (typeof result !== 'object' || result === null || Array.isArray(result)) {
    throw new UpstreamProtocolError(response ? `the upstream's ${method} result is not an object` : `the upstream's answer to ${method} is not a JSON-RPC response`);
  }
  return result as Record<string, unknown>;
}

/** A failure to get an answer at all, as the shim's errors: the cause is kept for the log. */
export function translateFailure(err: unknown, method: string): Error {
  if (err instanceof ShimError) return err;
  if (err instanceof Error && err.name === 'AbortError') return err;
  if (err instanceof AnswerTooLargeError) return new UpstreamProtocolError(`the upstream's answer to ${method} has a message larger than ${err.limit} bytes`);
  const error = new UnavailableError(`upstream (${method}: ${err instanceof Error ? err.message : String(err)})`);
  error.cause = err;
  return error;
}
