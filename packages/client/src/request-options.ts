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
  if (isDelay(options.maxTotalTimeout)) signals.push(AbortSignal.timeout(options.maxTotalTimeout));
  let restart: (() => void) | undefined;
  if (isDelay(options.timeout)) {
    if (options.resetTimeoutOnProgress) {
      const deadline = restartableDeadline(options.timeout);
      signals.push(deadline.signal);
      restart = deadline.restart;
    } else {
      signals.push(AbortSignal.timeout(options.timeout));
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
 * A signal that aborts `ms` after the last restart. Its timer never keeps a process alive (as
 * AbortSignal.timeout), and stops once the signal has aborted.
 */
function restartableDeadline(ms: number): { signal: AbortSignal; restart: () => void } {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    if (controller.signal.aborted) return;
    timer = setTimeout(() => controller.abort(new DOMException(`no progress for ${ms} ms`, 'TimeoutError')), ms);
    (timer as { unref?: () => void }).unref?.();
  };
  arm();
  return { signal: controller.signal, restart: arm };
}
