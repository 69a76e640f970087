import type { CallToolOptions, TaskStatusUpdate } from './types.js';

/**
 * The request options of the official SDK's calls (`RequestOptions`), as far as they say when to
 * give up and whom to tell about progress. Other keys (`task`, `relatedRequestId`, resumption
 * tokens, …) have no meaning for the helper and are ignored.
 */
export interface SdkRequestOptions {
  signal?: AbortSignal;
  timeout?: number;
  maxTotalTimeout?: number;
  resetTimeoutOnProgress?: boolean;
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
  [key: string]: unknown;
}


/**
 * Maps the SDK's request options of an old call onto the helper's call options, at run time (the
 * codemod writes `callOptionsFrom(options)` where it cannot read the options from the code):
 * `signal` stays; `timeout` and `maxTotalTimeout` become deadlines (an abort after the task exists
 * cancels it); with `resetTimeoutOnProgress` the `timeout` restarts on every status update, as it
 * restarted on every progress notification; `onprogress` is fed each status update's message.
 * `own` are the call's other options (callbacks the old code had in its stream loop): they are
 * kept, and an own `onStatus` runs after the mapped one. getTask and cancelTask use the `signal`.
 */
export function callOptionsFrom(options: SdkRequestOptions | undefined, own: CallToolOptions = {}): CallToolOptions {
  if (!options) return own;
  const signals: AbortSignal[] = [];
  if (options.signal) signals.push(options.signal);
  if (isDelay(options.maxTotalTimeout)) signals.push(deadline(options.maxTotalTimeout, `timed out after ${options.maxTotalTimeout} ms`).signal);
  let restart: (() => void) | undefined;
  if (isDelay(options.timeout)) {
    if (options.resetTimeoutOnProgress) {
      const restartable = deadline(options.timeout, `no progress for ${options.timeout} ms`);
      signals.push(restartable.signal);
      restart = restartable.restart;
    } else {
      signals.push(deadline(options.timeout, `timed out after ${options.timeout} ms`).signal);
    }
  }
  const onprogress = typeof options.onprogress === 'function' ? options.onprogress : undefined;
  if (own.signal) signals.push(own.signal);
  const mapped: CallToolOptions = { ...own };
  if (signals.length > 0) mapped.signal = signals.length === 1 ? signals[0] : AbortSignal.any(signals);
  if (onprogress || restart) {
    mapped.onStatus = (update: TaskStatusUpdate) => {
      restart?.();
      onprogress?.({ progress: 0, message: update.statusMessage ?? update.status });
      own.onStatus?.(update);
    };
  }
  return mapped;
}

function isDelay(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/**
 * A signal that aborts `ms` after the last restart, with a TimeoutError. Not AbortSignal.timeout:
 * on Node 20 its timer holds the signal weakly and AbortSignal.any holds its sources weakly, so
 * a timeout that only the combined signal refers to can be collected before it fires, and the
 * call never times out. This timer holds its controller until it fires; it never keeps a process
 * alive, and stops once the signal has aborted.
 */
function deadline(ms: number, message: string): { signal: AbortSignal; restart: () => void } {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    if (controller.signal.aborted) return;
    timer = setTimeout(() => controller.abort(new DOMException(message, 'TimeoutError')), ms);
    (timer as { unref?: () => void }).unref?.();
  };
  arm();
  return { signal: controller.signal, restart: arm };
}
