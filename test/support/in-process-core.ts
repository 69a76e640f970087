import { PrincipalLimits } from '../../src/core/limits.js';
import { systemClock } from '../../src/core/ports.js';
import { TaskService } from '../../src/core/task-service.js';
import { DEMO_TOOL_POLICIES } from '../../src/demo-upstream/policies.js';
import { startDemoUpstream } from '../../src/demo-upstream/server.js';
import { InProcessQueue } from '../../src/execution/in-process-queue.js';
import { Intake } from '../../src/execution/intake.js';
import { StepwiseCreation } from '../../src/execution/stepwise-creation.js';
import { TaskRunner } from '../../src/execution/task-runner.js';
import { EmbeddedTaskStore } from '../../src/store/embedded/embedded-store.js';
import { UpstreamGateway } from '../../src/upstream/gateway.js';

export interface CoreSettings {
  clientName: string;
  autoWindowMs: number;
  maxTtlMs: number;
  pollIntervalMs: number;
}

/**
 * The task core of one replica in the test process, for adapter unit tests: the demo upstream
 * started here, the embedded store, the in-process queue and its worker, the gateway, and a
 * TaskService with the demo tools' policies. No Redis, no spawned process.
 */
export async function startInProcessCore(settings: CoreSettings) {
  const upstream = await startDemoUpstream({ host: '127.0.0.1', port: 0 });
  const gateway = new UpstreamGateway({ url: upstream.url, clientInfo: { name: settings.clientName, version: '1.0.0' }, protocol: '2025-11-25' });
  const store = new EmbeddedTaskStore();
  const queue = new InProcessQueue(8);
  const limits = new PrincipalLimits(store, { maxOpenTasks: 100, maxOpenStreams: 100, maxSessions: 100, streamLeaseMs: 30_000 }, systemClock);
  const runner = new TaskRunner({ store, invoker: gateway, isIdempotent: () => false });
  const service = new TaskService({
    store,
    intake: new Intake({ creation: new StepwiseCreation(store, queue, limits, systemClock), queue, runner, runsCreated: true }),
    limits,
    invoker: gateway,
    upstreamRunsTasks: (tool) => gateway.isNative(tool),
    catalog: gateway.catalog,
    clock: systemClock,
    policies: {
      configured: Object.fromEntries(Object.entries(DEMO_TOOL_POLICIES).map(([tool, mode]) => [tool, { mode }])),
      fallback: 'auto',
      autoWindowMs: settings.autoWindowMs,
    },
    defaultTtlMs: 60_000,
    maxTtlMs: settings.maxTtlMs,
    pollIntervalMs: settings.pollIntervalMs,
  });
  queue.start(runner.process);
  return {
    upstream,
    gateway,
    store,
    service,
    async close(): Promise<void> {
      await queue.close(0);
      await gateway.close();
      await store.close();
      await upstream.close();
    },
  };
}

export type InProcessCore = Awaited<ReturnType<typeof startInProcessCore>>;
