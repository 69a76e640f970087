import type { ToolInvoker } from './ports.js';
import type { InputRequest } from './task.js';

/** Where a running call's input requests and progress go; the holder of the call changes them. */
export interface CallHooks {
  onInput(request: InputRequest, signal: AbortSignal): Promise<Record<string, unknown>>;
  onProgress(message: string): void;
}

/**
 * One upstream tool call running in this replica, started before anyone knew whether it would
 * become a task (docs/decisions/0032): while it runs inside its window its input and progress go
 * to the window; once it is a task, to the worker that holds its job. The call itself never moves.
 */
export class RunningCall {
  /** The upstream's answer: the tool's result, or its error (UpstreamRpcError: its JSON-RPC error). */
  readonly result: Promise<Record<string, unknown>>;
  private readonly abort = new AbortController();

  constructor(
    invoker: ToolInvoker,
    readonly tool: string,
    readonly args: Record<string, unknown>,
    timeoutMs: number,
    private hooks: CallHooks,
    /** The caller declared some kind of input: without it the upstream is told the call takes none. */
    takesInput: boolean,
  ) {
    this.result = invoker.callTool(tool, args, {
      signal: this.abort.signal,
      timeoutMs,
      onInput: takesInput ? (request, signal) => this.hooks.onInput(request, signal) : undefined,
      onProgress: (message) => this.hooks.onProgress(message),
    });
  }

  /** From now on input and progress go to `hooks`. */
  rebind(hooks: CallHooks): void {
    this.hooks = hooks;
  }

  /** Aborts the upstream call (the upstream hears `notifications/cancelled`). */
  cancel(): void {
    this.abort.abort();
  }
}
