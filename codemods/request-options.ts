import { Node } from 'ts-morph';
import { plainPropertyNames, propertyValue } from './mcp-calls.js';
import type { TransformContext } from './transforms/types.js';

/**
 * The SDK's RequestOptions of an old call, as options of the helper's driving calls
 * (`callTool`, `waitForTask`): `signal` stays; `timeout`/`maxTotalTimeout` become a deadline
 * signal (`AbortSignal.timeout(ms)`: when it fires after the task exists, the helper sends
 * tasks/cancel); `onprogress` becomes an `onStatus` callback fed with the task's status message;
 * `task` is dropped (SEP-2663: the server decides and chooses the TTL). Options the code does not
 * spell out (a variable, a call, spreads, other keys) are mapped at run time by the helper's
 * `callOptionsFrom`, which does the same and also restarts the deadline on progress.
 */
export interface MappedOptions {
  /** `signal` property text, or undefined. */
  signal?: string;
  /** `onStatus` value text, or undefined. */
  onStatus?: string;
  /** The old options as code, when they are mapped at run time (`callOptionsFrom(<runtime>)`). */
  runtime?: string;
}

const DROPPED = new Set(['task']);
const KNOWN = new Set(['signal', 'timeout', 'maxTotalTimeout', 'onprogress', 'resetTimeoutOnProgress', ...DROPPED]);

export function mapRequestOptions(options: Node | undefined): MappedOptions {
  if (!options || (Node.isIdentifier(options) && options.getText() === 'undefined')) return {};
  if (!Node.isObjectLiteralExpression(options)) return runtimeOptions(options);
  const names = plainPropertyNames(options);
  if (!names || names.some((n) => !KNOWN.has(n))) return runtimeOptions(options);
  const text = (name: string): string | undefined => propertyValue(options, name)?.getText();
  // A timeout that restarts on progress needs a timer the status updates restart: callOptionsFrom has one.
  const reset = text('resetTimeoutOnProgress');
  if (reset !== undefined && reset !== 'false' && text('timeout') !== undefined) return runtimeOptions(options);
  const signals: string[] = [];
  const signal = text('signal');
  if (signal) signals.push(signal);
  // Both limits cancel the call; the shorter one wins either way.
  for (const limit of ['timeout', 'maxTotalTimeout']) {
    const ms = text(limit);
    if (ms) signals.push(`AbortSignal.timeout(${ms})`);
  }
  const onprogress = text('onprogress');
  return {
    signal: signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : `AbortSignal.any([${signals.join(', ')}])`,
    onStatus: onprogress ? `(update) => (${onprogress})({ progress: 0, message: update.statusMessage ?? update.status })` : undefined,
  };
}

/** The options mapped at run time: when the code's mapping cannot be read, or must be merged with the call's own `onStatus`. */
export function runtimeOptions(options: Node): MappedOptions {
  return { runtime: options.getText() };
}

/** `signal`, `onStatus` as object-literal properties (`signal` shorthand when the value is a `signal` variable); none when mapped at run time. */
export function optionProperties(mapped: MappedOptions): string[] {
  const props: string[] = [];
  if (mapped.runtime !== undefined) return props;
  if (mapped.signal) props.push(mapped.signal === 'signal' ? 'signal' : `signal: ${mapped.signal}`);
  if (mapped.onStatus) props.push(`onStatus: ${mapped.onStatus}`);
  return props;
}

/**
 * The options argument of a helper call: `literal` (the call's own options as an object literal,
 * or undefined), wrapped as `callOptionsFrom(<old options>, literal)` when they are mapped at run time.
 */
export function optionsArgument(ctx: TransformContext, mapped: MappedOptions, literal: string | undefined): string | undefined {
  if (mapped.runtime === undefined) return literal;
  ctx.importFromHelper(['callOptionsFrom']);
  return `callOptionsFrom(${mapped.runtime}${literal ? `, ${literal}` : ''})`;
}

/** The options of getTask/cancelTask (a signal only): `{ signal }`, `callOptionsFrom(<old options>)`, or none. */
export function signalArgument(ctx: TransformContext, options: Node | undefined): string | undefined {
  let mapped = mapRequestOptions(options);
  // A progress callback of a one-request call has nothing to report; the run-time mapping ignores it.
  if (mapped.onStatus && options) mapped = runtimeOptions(options);
  return optionsArgument(ctx, mapped, mapped.signal ? `{ ${optionProperties({ ...mapped, onStatus: undefined }).join(', ')} }` : undefined);
}
