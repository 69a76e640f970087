/**
 * Baseline (a): what a team would otherwise run — the official MCP TypeScript SDK's own
 * 2025-11-25 task server: McpServer + StreamableHTTPServerTransport (stateful sessions, JSON
 * answers), tasks in the SDK's InMemoryTaskStore, one task tool (`greet`, taskSupport
 * required) whose job finishes at once. tasks/get is served by the SDK's own handler.
 * Usage: node --import tsx bench/baselines/sdk-task-server.ts
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { z } from 'zod';
import { serveSdkSessions } from './sdk-sessions.js';

const taskStore = new InMemoryTaskStore();

function makeServer(): McpServer {
  const server = new McpServer(
    { name: 'sdk-task-baseline', version: '1.0.0' },
    { capabilities: { tasks: { requests: { tools: { call: {} } } } }, taskStore, taskMessageQueue: new InMemoryTaskMessageQueue() },
  );
  server.experimental.tasks.registerToolTask(
    'greet',
    { description: 'Greets at once, as a task', inputSchema: { name: z.string() }, execution: { taskSupport: 'required' } },
    {
      async createTask({ name }, { taskStore: store, taskRequestedTtl }) {
        const task = await store.createTask({ ttl: taskRequestedTtl ?? 60_000 });
        void store.storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: `Hello, ${name}!` }] });
        return { task };
      },
      async getTask(_args, { taskStore: store, taskId }) {
        return store.getTask(taskId);
      },
      async getTaskResult(_args, { taskStore: store, taskId }) {
        return store.getTaskResult(taskId) as never;
      },
    },
  );
  return server;
}

serveSdkSessions('sdk-task-server', makeServer, { enableJsonResponse: true });
