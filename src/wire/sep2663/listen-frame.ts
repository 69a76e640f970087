import type { JsonRpcId } from '../jsonrpc/message.js';
import { META } from './constants.js';

/**
 * The start of one stream's `notifications/tasks` SSE frame, up to and including the comma after
 * its `_meta`. Built once per stream, so that a change watched by many streams is stringified once.
 */
export function taskFramePrefix(id: JsonRpcId): string {
  return `data: {"jsonrpc":"2.0","method":"notifications/tasks","params":{"_meta":{${JSON.stringify(META.subscriptionId)}:${JSON.stringify(id)}},`;
}

/**
 * The frame `data: {"jsonrpc":"2.0","method":"notifications/tasks","params":{_meta, ...task}}`,
 * byte for byte what `JSON.stringify` gives for that object. `taskJson` is the stringified
 * DetailedTask: never empty (it always has a taskId) and never holding `_meta`, so its opening
 * brace can give way to the prefix.
 */
export function taskFrame(prefix: string, taskJson: string): string {
  return `${prefix}${taskJson.slice(1)}}\n\n`;
}
