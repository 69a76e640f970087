import { Node } from 'ts-morph';
import { plainPropertyNames, propertyValue } from './mcp-calls.js';

/**
 * The SDK's RequestOptions of an old call, as options of the helper's driving calls
 * (`callTool`, `waitForTask`): `signal` stays; `timeout`/`maxTotalTimeout` become a deadline
 * signal (`AbortSignal.timeout(ms)`: when it fires after the task exists, the helper sends
 * tasks/cancel); `onprogress` becomes an `onStatus` callback fed with the task's status message;
 * `task` is dropped (SEP-2663: the server decides and chooses the TTL).
 */
export interface MappedOptions {
  /** `signal` property text, or undefined. */
  signal?: string;
  /** `onStatus` value text, or undefined. */
  onStatus?: string;
  /** `resetTimeoutOnProgress: true`: the deadline no longer restarts on progress (a marker says so). */
  resetTimeout: boolean;
}

const DROPPED = new Set(['task']);
const KNOWN = new Set(['signal', 'timeout', 'maxTotalTimeout', 'onprogress', 'resetTimeoutOnProgress', ...DROPPED]);

/** Undefined when the options cannot be mapped (not an object literal, spreads, other keys). */
export function mapRequestOptions(options: Node | undefined): MappedOptions | undefined {
  if (!options) return { resetTimeout: false };
  if (!Node.isObjectLiteralExpression(options)) return undefined;
  const names = plainPropertyNames(options);
  if (!names || names.some((n) => !KNOWN.has(n))) return undefined;
  const text = (name: string): string | undefined => propertyValue(options, name)?.getText();
  const signals: string[] = [];
  const signal = text('signal');
  if (signal) signals.push(signal);
  // Both limits cancel the call; the shorter one wins either way.
  for (const limit of ['timeout', 'maxTotalTimeout']) {
    const ms = text(limit);
    if (ms) signals.push(`AbortSignal.timeout(${ms})`);
  }
  const onprogress = text('onprogress');
  const reset = text('resetTimeoutOnProgress');
  return {
    signal: signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : `AbortSignal.any([${signals.join(', ')}])`,
    onStatus: onprogress ? `(update) => (${onprogress})({ progress: 0, message: update.statusMessage ?? update.status })` : undefined,
    resetTimeout: reset !== undefined && reset !== 'false' && text('timeout') !== undefined,
  };
}

/** `signal`, `onStatus` as object-literal properties (`signal` shorthand when the value is a `signal` variable). */
export function optionProperties(mapped: MappedOptions): string[] {
  const props: string[] = [];
  if (mapped.signal) props.push(mapped.signal === 'signal' ? 'signal' : `signal: ${mapped.signal}`);
  if (mapped.onStatus) props.push(`onStatus: ${mapped.onStatus}`);
  return props;
}
