/**
 * The `requestState` of an MRTR answer (SEP-2322): it names the record that holds
 * the call's input requests, and whether that record is a task not yet announced (`task`) or a
 * synchronous call parked in this replica (`sync`). It needs no signature: the record is bound to
 * the caller's principal and to the original request, and the phase is only honoured where the
 * retry's own plan allows it (TaskService.callTool).
 */
export type CallPhase = 'sync' | 'task';

export interface RequestState {
  recordId: string;
  phase: CallPhase;
}

export function encodeRequestState({ recordId, phase }: RequestState): string {
  return Buffer.from(JSON.stringify({ v: 1, t: recordId, ...(phase === 'task' ? { p: 'task' } : {}) })).toString('base64url');
}

/** Undefined for anything the shim did not hand out in this shape. */
export function decodeRequestState(state: string): RequestState | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(state, 'base64url').toString('utf8')) as { v?: unknown; t?: unknown; p?: unknown };
    if (parsed.v !== 1 || typeof parsed.t !== 'string') return undefined;
    if (parsed.p !== undefined && parsed.p !== 'task') return undefined;
    return { recordId: parsed.t, phase: parsed.p === 'task' ? 'task' : 'sync' };
  } catch {
    return undefined;
  }
}
