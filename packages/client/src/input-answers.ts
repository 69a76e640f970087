import type { InputRequestHandler, TaskSnapshot } from './types.js';

/**
 * The answers of one driven task. Each input key goes to the handler exactly once, however
 * many polls still list it (the server's view lags behind `tasks/update`); answers are
 * collected as handlers finish and taken in batches, so one slow question does not hold
 * back the others.
 */
export class InputAnswers {
  /** Keys handed to the handler: in flight, ready, or sent. Never asked or sent again. */
  private readonly asked = new Set<string>();
  private ready: Record<string, unknown> = {};
  private readyCount = 0;
  private failure: { error: unknown } | undefined;

  constructor(
    private readonly handler: InputRequestHandler | undefined,
    /** Called when an answer is ready or a handler failed. */
    private readonly onSettled: () => void,
  ) {}

  /** Starts the handler for every new key. Throws when a key needs an answer and there is no handler. */
  offer(task: TaskSnapshot): void {
    for (const [key, request] of Object.entries(task.inputRequests ?? {})) {
      if (this.asked.has(key)) continue;
      if (!this.handler) throw new NoInputHandlerError(task.taskId, key, request.method, request.params);
      this.asked.add(key);
      const handler = this.handler;
      Promise.resolve()
        .then(() => handler({ key, method: request.method, params: request.params }, task))
        .then(
          (answer) => {
            this.ready[key] = answer;
            this.readyCount++;
          },
          (error: unknown) => {
            this.failure ??= { error };
          },
        )
        .finally(this.onSettled);
    }
  }

  /** The answers that are ready and not yet taken, or undefined when there are none. */
  take(): Record<string, unknown> | undefined {
    if (this.readyCount === 0) return undefined;
    const batch = this.ready;
    this.ready = {};
    this.readyCount = 0;
    return batch;
  }

  /** A handler's error, rethrown by the driver. */
  get failed(): { error: unknown } | undefined {
    return this.failure;
  }
}

/** An `input_required` task needs an answer, and neither the call nor the client has a handler. */
export class NoInputHandlerError extends Error {
  constructor(
    readonly taskId: string,
    readonly key: string,
    readonly method: string,
    params: Record<string, unknown>,
  ) {
    const message = typeof params.message === 'string' ? ` "${params.message}"` : '';
    super(
      `Task ${taskId} needs input for key "${key}" (${method}${message}) but no onInputRequest handler was given. ` +
        'The task is left running: answer it with updateTask() or drive it again with waitForTask() and a handler.',
    );
    this.name = 'NoInputHandlerError';
  }
}
