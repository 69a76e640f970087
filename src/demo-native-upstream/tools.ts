import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CreateTaskRequestHandlerExtra } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { CreateMessageResultSchema, ElicitResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export interface NativeToolSettings {
  /** The shared store of every session: the tools read their task's status from it (a cancel ends the work). */
  store: InMemoryTaskStore;
  /** Ceiling on the TTL a client asks for (the SDK's store deletes a task at its TTL, even a running one). */
  maxTtlMs: number;
  pollIntervalMs: number;
  /** Update statuses through the shared store directly: no `notifications/tasks/status` go out. */
  quiet: boolean;
}

/** What a background task body gets: status updates and the task's side channel. */
interface TaskContext {
  taskId: string;
  extra: CreateTaskRequestHandlerExtra;
  settings: NativeToolSettings;
}

const text = (value: string, isError = false): CallToolResult => ({ content: [{ type: 'text', text: value }], ...(isError ? { isError: true } : {}) });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Ties a side-channel request to the task (related-task `_meta`): the SDK then queues it for the
 * client's tasks/result stream and marks the task input_required. The request options' type
 * does not list `relatedTask`, though the SDK reads it from there.
 */
function relatedTo(ctx: TaskContext, settings: NativeToolSettings): never {
  return { relatedTask: { taskId: ctx.taskId }, timeout: settings.maxTtlMs } as never;
}

async function isCancelled(ctx: TaskContext): Promise<boolean> {
  const task = await ctx.settings.store.getTask(ctx.taskId);
  return !task || task.status === 'cancelled';
}

/** Through the request's store a status change is announced (notifications/tasks/status); `quiet` skips that. */
async function setStatus(ctx: TaskContext, status: 'working' | 'input_required', message?: string): Promise<void> {
  if (ctx.settings.quiet) await ctx.settings.store.updateTaskStatus(ctx.taskId, status, message);
  else await ctx.extra.taskStore.updateTaskStatus(ctx.taskId, status, message);
}

async function finish(ctx: TaskContext, status: 'completed' | 'failed', result: CallToolResult): Promise<void> {
  if (await isCancelled(ctx)) return;
  if (ctx.settings.quiet) await ctx.settings.store.storeTaskResult(ctx.taskId, status, result);
  else await ctx.extra.taskStore.storeTaskResult(ctx.taskId, status, result);
}

/**
 * Creates the task (TTL capped, the configured poll interval), answers the CreateTaskResult at
 * once and runs `body` in the background, as the SDK's task servers do.
 */
function taskHandler<A>(settings: NativeToolSettings, body: (args: A, ctx: TaskContext) => Promise<{ status: 'completed' | 'failed'; result: CallToolResult }>) {
  return {
    createTask: async (args: A, extra: CreateTaskRequestHandlerExtra) => {
      const ttl = Math.min(extra.taskRequestedTtl ?? settings.maxTtlMs, settings.maxTtlMs);
      const task = await extra.taskStore.createTask({ ttl, pollInterval: settings.pollIntervalMs });
      const ctx: TaskContext = { taskId: task.taskId, extra, settings };
      void body(args, ctx)
        .then(({ status, result }) => finish(ctx, status, result))
        .catch((error: unknown) => finish(ctx, 'failed', text(error instanceof Error ? error.message : String(error), true)))
        .catch(() => undefined); // the task is gone (TTL) or already terminal: nobody is left to tell
      return { task };
    },
    getTask: async (_args: A, extra: { taskId: string; taskStore: CreateTaskRequestHandlerExtra['taskStore'] }) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_args: A, extra: { taskId: string; taskStore: CreateTaskRequestHandlerExtra['taskStore'] }) =>
      (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
  };
}

/** The demo tools, each registered with the official SDK's `registerToolTask`. */
export function registerNativeTools(mcp: McpServer, settings: NativeToolSettings): void {
  const tasks = mcp.experimental.tasks;

  tasks.registerToolTask(
    'native_work',
    {
      description: 'Works for `seconds`, reporting progress in statusMessage, then answers "Done <label>". Task required.',
      inputSchema: { seconds: z.number().min(0).max(3_600).default(2), label: z.string().default('job') },
      execution: { taskSupport: 'required' },
    },
    taskHandler(settings, async ({ seconds, label }: { seconds: number; label: string }, ctx) => {
      const steps = Math.max(1, Math.round((seconds * 1000) / 200));
      for (let step = 1; step <= steps; step++) {
        await pause((seconds * 1000) / steps);
        if (await isCancelled(ctx)) return { status: 'completed', result: text('cancelled') };
        await setStatus(ctx, 'working', `Working ${label}: ${Math.round((step / steps) * 100)}%`);
      }
      return { status: 'completed', result: text(`Done ${label}`) };
    }) as never,
  );

  tasks.registerToolTask(
    'native_quick',
    {
      description: 'Echoes `text` after a short pause. Task optional: without a task the SDK runs it and answers plainly.',
      inputSchema: { text: z.string() },
      execution: { taskSupport: 'optional' },
    },
    taskHandler(settings, async ({ text: value }: { text: string }) => {
      await pause(100);
      return { status: 'completed', result: text(`Echo: ${value}`) };
    }) as never,
  );

  tasks.registerToolTask(
    'native_confirm',
    {
      description: 'Asks (elicitation inside its task) whether to delete `filename`; answers "Deleted …" or "Kept …".',
      inputSchema: { filename: z.string() },
      execution: { taskSupport: 'required' },
    },
    taskHandler(settings, async ({ filename }: { filename: string }, ctx) => {
      const answer = await ctx.extra.sendRequest(
        {
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message: `Delete ${filename}?`,
            requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] },
          },
        },
        ElicitResultSchema,
        relatedTo(ctx, settings),
      );
      await setStatus(ctx, 'working');
      const confirmed = answer.action === 'accept' && answer.content?.confirm === true;
      return { status: 'completed', result: text(confirmed ? `Deleted ${filename}` : `Kept ${filename}`) };
    }) as never,
  );

  tasks.registerToolTask(
    'native_haiku',
    {
      description: 'Asks the client to sample a haiku about `topic` (sampling inside its task) and answers it.',
      inputSchema: { topic: z.string() },
      execution: { taskSupport: 'required' },
    },
    taskHandler(settings, async ({ topic }: { topic: string }, ctx) => {
      const sampled = await ctx.extra.sendRequest(
        {
          method: 'sampling/createMessage',
          params: { messages: [{ role: 'user', content: { type: 'text', text: `Write a haiku about ${topic}` } }], maxTokens: 100 },
        },
        CreateMessageResultSchema,
        relatedTo(ctx, settings),
      );
      await setStatus(ctx, 'working');
      const content = sampled.content as { type: string; text?: string };
      return { status: 'completed', result: text(content.type === 'text' ? (content.text ?? '') : `(${content.type})`) };
    }) as never,
  );

  tasks.registerToolTask(
    'native_fail',
    {
      description: 'Fails its task after a short pause: status failed, an isError result naming `reason`.',
      inputSchema: { reason: z.string().default('the demo tool always fails') },
      execution: { taskSupport: 'required' },
    },
    taskHandler(settings, async ({ reason }: { reason: string }) => {
      await pause(200);
      return { status: 'failed', result: text(`Failed: ${reason}`, true) };
    }) as never,
  );
}
