import type { ServerResponse } from 'node:http';

/** What a wire adapter answers; the HTTP layer writes it. */
export type Reply =
  | { kind: 'json'; status: number; body: unknown; headers?: Record<string, string> }
  /** A JSON-RPC result already serialised (the tasks/get fast path); never an error. */
  | { kind: 'json-text'; status: number; text: string }
  | { kind: 'empty'; status: number; headers?: Record<string, string> }
  | { kind: 'stream'; serve: (res: ServerResponse) => Promise<void> };

export function json(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return { kind: 'json', status, body, headers };
}
