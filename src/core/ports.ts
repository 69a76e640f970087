import type { InputRequest } from './task.js';

/** The core's view of the upstream: it calls tools and lists them, without knowing the transport. */
export interface ToolInvoker {
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: {
      signal?: AbortSignal;
      timeoutMs: number;
      onInput?: (request: InputRequest, signal: AbortSignal) => Promise<Record<string, unknown>>;
      onProgress?: (message: string) => void;
    },
  ): Promise<Record<string, unknown>>;
}

export interface ToolInfo {
  name: string;
  inputSchema?: { properties?: Record<string, unknown> };
  execution?: { taskSupport?: 'forbidden' | 'optional' | 'required' };
}

export interface ToolCatalog {
  /** The upstream's tool, from a short-lived cache that refreshes on a miss. */
  get(name: string): Promise<ToolInfo | undefined>;
  /**
   * Whether the upstream declares task-augmented `tools/call`, as of the listing `get` last read
   * (false until the upstream first answered: nothing is known about its tools either).
   */
  declaresTasks(): boolean;
}

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Hands a created task to the workers. */
export interface TaskQueue {
  enqueue(taskId: string): Promise<void>;
}
