/**
 * The task side of the soak: keeps N tasks in flight across the replicas, each polled with
 * tasks/get at the pollIntervalMs it was given, on alternating replicas (a plain load balancer
 * would spread them the same way). A task that ends is replaced by a new one.
 */
import { post, postRead, rpcOf } from './http.js';
import { sep2663 } from './mcp.js';
import { sleep } from './proc.js';
import { ErrorTally } from './soak-errors.js';

export interface TaskLoadOptions {
  urls: string[];
  inFlight: number;
  seconds: { min: number; max: number };
  log: (line: string) => void;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
/** The first tasks are created over this long, not in one burst. */
const RAMP_MS = 10_000;
const MAX_FAILED_POLLS = 10;

export class TaskLoad {
  readonly errors = new ErrorTally();
  created = 0;
  completed = 0;
  polls = 0;
  private readonly live = new Map<string, { status: string; createdAt: number }>();
  private readonly ended = new Map<string, number>();
  private creating = 0;
  private running = false;
  private next = 0;

  constructor(private readonly options: TaskLoadOptions) {}

  get inFlight(): number {
    return this.live.size + this.creating;
  }

  liveIds(): string[] {
    return [...this.live.keys()];
  }

  /** When the load saw the task end, if it did. */
  endedAt(taskId: string): number | undefined {
    return this.ended.get(taskId);
  }

  start(): void {
    this.running = true;
    for (let i = 0; i < this.options.inFlight; i++) {
      setTimeout(() => void this.slot(), Math.floor((i / this.options.inFlight) * RAMP_MS));
    }
  }

  stop(): void {
    this.running = false;
  }

  /** Stops refilling and waits for the tasks in flight to end; returns those that did not. */
  async drain(boundMs: number): Promise<Array<{ taskId: string; status: string; ageS: number }>> {
    this.running = false;
    const deadline = Date.now() + boundMs;
    while (this.inFlight > 0 && Date.now() < deadline) await sleep(250);
    return [...this.live].map(([taskId, t]) => ({ taskId, status: t.status, ageS: Math.round((Date.now() - t.createdAt) / 1000) }));
  }

  private url(): string {
    const url = this.options.urls[this.next % this.options.urls.length]!;
    this.next++;
    return url;
  }

  /** One slot: create a task, poll it to its end, repeat while the soak runs. */
  private async slot(): Promise<void> {
    while (this.running) {
      const taskId = await this.create();
      if (!taskId) {
        await sleep(1_000);
        continue;
      }
      await this.follow(taskId);
    }
  }

  private async create(): Promise<string | undefined> {
    const { min, max } = this.options.seconds;
    const seconds = min + Math.floor(Math.random() * (max - min + 1));
    this.creating++;
    try {
      const reply = await post(this.url(), ...args(sep2663('tools/call', { name: 'slow_compute', arguments: { seconds, label: 'soak' } })));
      const rpc = rpcOf(reply);
      const taskId = rpc?.result?.taskId as string | undefined;
      if (reply.status !== 200 || !taskId) {
        this.errors.add(`create: HTTP ${reply.status} ${rpc?.error?.code ?? ''} ${String(rpc?.error?.message ?? '').slice(0, 60)}`);
        return undefined;
      }
      this.created++;
      this.live.set(taskId, { status: rpc.result.status as string, createdAt: Date.now() });
      return taskId;
    } catch (err) {
      this.errors.add(`create: ${(err as Error).message.slice(0, 80)}`);
      return undefined;
    } finally {
      this.creating--;
    }
  }

  private async follow(taskId: string): Promise<void> {
    let interval = 2_000;
    let failures = 0;
    for (;;) {
      // A task its replicas cannot answer for is left in flight: the drain reports it as stuck.
      if (failures >= MAX_FAILED_POLLS) {
        this.live.get(taskId)!.status = 'unreadable';
        return;
      }
      await sleep(interval);
      let status: string | undefined;
      let why: string;
      try {
        const reply = await postRead(this.url(), ...args(sep2663('tasks/get', { taskId })));
        this.polls++;
        const rpc = rpcOf(reply);
        status = rpc?.result?.status as string | undefined;
        if (reply.status !== 200 || !status) {
          this.errors.add(`tasks/get: HTTP ${reply.status} ${rpc?.error?.code ?? ''} ${String(rpc?.error?.message ?? '').slice(0, 60)}`);
          failures++;
          continue;
        }
        failures = 0;
        interval = (rpc.result.pollIntervalMs as number | undefined) ?? interval;
        why = String(rpc.result.error?.message ?? rpc.result.statusMessage ?? '').slice(0, 80);
      } catch (err) {
        this.errors.add(`tasks/get: ${(err as Error).message.slice(0, 80)}`);
        failures++;
        continue;
      }
      const task = this.live.get(taskId)!;
      task.status = status;
      if (!TERMINAL.has(status)) continue;
      if (status !== 'completed') this.errors.add(`task ended ${status}: ${why}`);
      else this.completed++;
      this.live.delete(taskId);
      this.ended.set(taskId, Date.now());
      return;
    }
  }
}

function args(req: { headers: Record<string, string>; body: string }): [Record<string, string>, string] {
  return [req.headers, req.body];
}
