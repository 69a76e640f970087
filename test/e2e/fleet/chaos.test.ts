import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { LegacySession, type SseEvent, type SseStream } from '../../support/legacy-client.js';
import { BACKEND_HEADER, startRoundRobinProxy, type RoundRobinProxy } from '../../support/round-robin-proxy.js';
import { pollUntil, Sep2663Client, textOf, type Json, type ListenStream } from '../../support/sep2663-client.js';
import type { ShimProcess } from '../../support/shim-process.js';
import { fleetArgs, LOST_MESSAGE, writeFleetPolicy } from './fleet-policy.js';

// The recorder counts the calls the upstream got: an idempotent task re-run shows as a second call.
const stack = useStack({ stores: [], record: true });

/**
 * Longer than worker-loss.test.ts uses: three replicas starting 200 tasks on two loaded cores
 * can stall an event loop past a 2 s lock, and a replica that misses its renewal loses its
 * jobs as surely as a dead one (which this test would rightly report).
 */
const JOB_LOCK_MS = 6_000;
/** Lock expiry plus two stall checks (see worker-loss.test.ts), and room for a loaded host and 1 s polls. */
const LOSS_BOUND_MS = 2 * JOB_LOCK_MS + 12_000;
/** How long a client keeps retrying a request that the dying replica cut off. */
const RETRY_FOR_MS = 30_000;
const POLL_MS = 1_000;
const TERMINAL = ['completed', 'failed', 'cancelled'];

const COUNTS = { polled: 80, input: 30, idempotent: 20, legacy: 40, dialect: 20, pushSessions: 10 } as const;

let replicas: ShimProcess[];
let proxy: RoundRobinProxy;

beforeAll(async () => {
  const policy = writeFleetPolicy();
  replicas = await Promise.all([0, 1, 2].map(() => stack.startShim({ args: fleetArgs(policy, JOB_LOCK_MS) })));
  proxy = await startRoundRobinProxy(replicas.map((shim) => shim.url));
}, 60_000);

afterAll(async () => {
  await proxy?.close();
});

/** What a client does when a replica dies under it: the same request again, through the proxy. */
async function retry<T>(what: string, attempt: () => Promise<T>, done: (value: T) => boolean = () => true): Promise<T> {
  const deadline = Date.now() + RETRY_FOR_MS;
  for (;;) {
    let last: unknown;
    try {
      const value = await attempt();
      if (done(value)) return value;
      last = value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: still failing after ${RETRY_FOR_MS} ms; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const notCut = (reply: { status: number }): boolean => reply.status !== 502;

/** The final state of a task and when the client first saw it, relative to the kill. */
interface Outcome {
  kind: string;
  taskId: string;
  status: string;
  text?: string;
  errorMessage?: string;
  seenAt: number;
  /** The text of the result when it completes. */
  expected?: string;
}

/** Resolved by the kill; some flows hold their answers until then. */
let killed!: () => void;
const afterKill = new Promise<void>((resolve) => (killed = resolve));
let killedAt = Number.POSITIVE_INFINITY;

describe('three replicas behind a round-robin proxy, one killed with SIGKILL mid-run', () => {
  it('brings all 200 tasks of every wire to a terminal state through the survivors; streams reconnect', { timeout: 150_000 }, async () => {
    const sep = new Sep2663Client(proxy.url);
    const sepResult = async (method: string, params: Record<string, unknown>): Promise<Json> => {
      const reply = await retry(method, () => sep.request(method, params), notCut);
      if (reply.status !== 200 || !reply.body?.result) throw new Error(`${method}: HTTP ${reply.status} ${reply.text}`);
      return reply.body.result;
    };
    const legacyResult = async (session: LegacySession, method: string, params: Record<string, unknown>): Promise<Json> => {
      const reply = await retry(method, () => session.post({ jsonrpc: '2.0', id: `${method}-${Math.random()}`, method, params }), (r) => notCut(r) && r.body !== undefined);
      if (!reply.body.result) throw new Error(`${method}: ${JSON.stringify(reply.body)}`);
      return reply.body.result;
    };
    /** tasks/result: the tool's result, or the task's error (the 2025-11-25 tasks/get carries neither). */
    const legacyEnd = async (session: LegacySession, taskId: string, id: number): Promise<{ text?: string; errorMessage?: string }> => {
      const reply = await retry('tasks/result', () => session.post({ jsonrpc: '2.0', id, method: 'tasks/result', params: { taskId } }), (r) => notCut(r) && r.body !== undefined);
      return { text: reply.body.result && textOf(reply.body.result), errorMessage: reply.body.error?.message };
    };
    const openSession = (): Promise<LegacySession> => retry('initialize', () => LegacySession.open(proxy.url));

    // GET streams first, one after another with nothing else in flight: round robin puts them on every replica.
    const pushSessions = await Promise.all(Array.from({ length: COUNTS.pushSessions }, openSession));
    const getStreams: ResumableGet[] = [];
    for (const session of pushSessions) getStreams.push(await ResumableGet.open(session));

    // 200 tasks, created before the kill.
    const input = await Promise.all(Array.from({ length: COUNTS.input }, (_, i) => sep.createTask('confirm_delete', { filename: `b${i}.txt` })));
    const legacySessions = await Promise.all(Array.from({ length: 8 }, openSession));
    const legacy = await Promise.all(
      Array.from({ length: COUNTS.legacy }, async (_, i) => {
        const session = legacySessions[i % legacySessions.length] as LegacySession;
        const created = await legacyResult(session, 'tools/call', { name: 'slow_compute', arguments: { seconds: 4 + (i % 3), label: `e${i}` }, task: {} });
        return { session, taskId: created.task.taskId as string, label: `e${i}`, seconds: 4 + (i % 3) };
      }),
    );
    const dialectSessions = await Promise.all(Array.from({ length: 4 }, openSession));
    const dialect = await Promise.all(
      Array.from({ length: COUNTS.dialect }, async (_, i) => {
        const session = dialectSessions[i % dialectSessions.length] as LegacySession;
        const created = await legacyResult(session, 'tasks/create', { name: 'slow_compute', arguments: { seconds: 4 + (i % 3), label: `f${i}` } });
        return { session, taskId: created.taskId as string, label: `f${i}`, seconds: 4 + (i % 3) };
      }),
    );
    const pushed = await Promise.all(
      pushSessions.map(async (session, i) => ({
        session,
        stream: getStreams[i] as ResumableGet,
        first: (await legacyResult(session, 'tools/call', { name: 'confirm_delete', arguments: { filename: `g${i}-1.txt` }, task: {} })).task.taskId as string,
      })),
    );
    // Created last, so that they are still running when the kill comes (creating 200 takes a while).
    const polled = await Promise.all(
      Array.from({ length: COUNTS.polled }, (_, i) => sep.createTask('slow_compute', { seconds: 6 + (i % 4), label: `a${i}` })),
    );
    const idempotent = await Promise.all(
      Array.from({ length: COUNTS.idempotent }, (_, i) => sep.createTask('run_ci_pipeline', { commit: `c${i}`, stepMs: 30 })),
    );
    expect(polled.length + input.length + idempotent.length + legacy.length + dialect.length + pushed.length).toBe(200);

    // Listens on every replica too (one after another again), each watching eight polled tasks and
    // some of the input tasks answered only after the kill, so that every listen outlives it.
    const listens: ResumableListen[] = [];
    for (let i = 0; i < 6; i++) {
      const late = input.filter((_, n) => n % 2 === 1 && (n >> 1) % 6 === i);
      listens.push(await ResumableListen.open(proxy.url, [...polled.slice(i * 8, i * 8 + 8), ...late].map((t) => t.taskId as string)));
    }

    const victimIndex = 1;
    expect(getStreams.filter((s) => s.firstBackend === victimIndex).length).toBeGreaterThan(0);
    expect(listens.filter((l) => l.firstBackend === victimIndex).length).toBeGreaterThan(0);

    let progressSeen = 0;
    const settle = (kind: string, taskId: string, read: () => Promise<Json>, statusOf = (t: Json): string => t.status): Promise<Json> =>
      pollUntil(
        async () => {
          const task = await read();
          if (task.statusMessage) progressSeen++;
          return task;
        },
        (task) => TERMINAL.includes(statusOf(task)),
        { timeoutMs: 120_000, intervalMs: POLL_MS },
      ).catch((err: Error) => {
        throw new Error(`${kind} ${taskId}: ${err.message}`);
      });
    const outcome = (kind: string, taskId: string, task: Json, text?: string): Outcome => ({
      kind,
      taskId,
      status: task.status,
      text,
      errorMessage: task.error?.message,
      seenAt: Date.now() - killedAt,
    });

    const flows: Array<Promise<Outcome>> = [
      ...polled.map(async (t, i) => {
        const task = await settle('polled', t.taskId, () => sepResult('tasks/get', { taskId: t.taskId }));
        return { ...outcome('polled', t.taskId, task, task.result && textOf(task.result)), expected: `Computed a${i} after ${6 + (i % 4)}s` };
      }),
      ...input.map(async (t, i) => {
        const asked = await settle('input', t.taskId, () => sepResult('tasks/get', { taskId: t.taskId }), (task) =>
          task.status === 'input_required' ? 'completed' : task.status,
        );
        if (asked.status === 'input_required') {
          // Half answer at once, half only after the kill (their worker may be gone by then).
          if (i % 2 === 1) await afterKill;
          const key = Object.keys(asked.inputRequests)[0] as string;
          await retry('tasks/update', () => sep.updateTask(t.taskId, { [key]: { action: 'accept', content: { confirm: true } } }), notCut);
        }
        const task = await settle('input', t.taskId, () => sepResult('tasks/get', { taskId: t.taskId }));
        return { ...outcome('input', t.taskId, task, task.result && textOf(task.result)), expected: `Deleted b${i}.txt` };
      }),
      ...idempotent.map(async (t, i) => {
        const task = await settle('idempotent', t.taskId, () => sepResult('tasks/get', { taskId: t.taskId }));
        return { ...outcome('idempotent', t.taskId, task, task.result && textOf(task.result)), expected: `Pipeline passed for c${i}: 342 tests` };
      }),
      ...legacy.map(async (t, i) => {
        // Half poll tasks/get first; half wait on tasks/result from the start (an SSE stream the kill may cut).
        if (i % 2 === 0) await settle('legacy', t.taskId, () => legacyResult(t.session, 'tasks/get', { taskId: t.taskId }));
        const end = await legacyEnd(t.session, t.taskId, 900 + i);
        const task = await legacyResult(t.session, 'tasks/get', { taskId: t.taskId });
        return { ...outcome('legacy', t.taskId, task, end.text), errorMessage: end.errorMessage, expected: `Computed ${t.label} after ${t.seconds}s` };
      }),
      ...dialect.map(async (t) => {
        const task = await settle('dialect', t.taskId, () => legacyResult(t.session, 'tasks/status', { taskId: t.taskId }), (s) =>
          s.status === 'done' ? 'completed' : s.status === 'error' ? 'failed' : s.status,
        );
        const status = task.status === 'done' ? 'completed' : 'failed';
        return { ...outcome('dialect', t.taskId, { ...task, status }, task.result && textOf(task.result)), expected: `Computed ${t.label} after ${t.seconds}s` };
      }),
      ...pushed.map(async ({ session, stream, first }, i) => {
        const push = await stream.next((e) => e.message?.method === 'elicitation/create' && e.message.id.startsWith(`task:${first}:`));
        await retry('push answer', () => session.answer(push.message.id, { action: 'accept', content: { confirm: true } }), (r) => r.status === 202);
        const firstTask = await settle('pushed', first, () => legacyResult(session, 'tasks/get', { taskId: first }));
        const firstEnd = await legacyEnd(session, first, 800 + i);
        // The session goes on after the kill: its next push reaches the stream, resumed where it was cut.
        await afterKill;
        const second = (await legacyResult(session, 'tools/call', { name: 'confirm_delete', arguments: { filename: `g${i}-2.txt` }, task: {} })).task.taskId as string;
        const again = await stream.next((e) => e.message?.method === 'elicitation/create' && e.message.id.startsWith(`task:${second}:`));
        await retry('push answer', () => session.answer(again.message.id, { action: 'accept', content: { confirm: true } }), (r) => r.status === 202);
        const secondTask = await settle('pushed-after', second, () => legacyResult(session, 'tasks/get', { taskId: second }));
        const text = textOf(await legacyResult(session, 'tasks/result', { taskId: second }));
        expect({ status: secondTask.status, text }).toEqual({ status: 'completed', text: `Deleted g${i}-2.txt` });
        return { ...outcome('pushed', first, firstTask, firstEnd.text), errorMessage: firstEnd.errorMessage, expected: `Deleted g${i}-1.txt` };
      }),
    ];
    const listening = listens.map((l) => l.untilAllTerminal(120_000));

    // Kill once the fleet is busy: tasks report progress.
    await pollUntil(async () => progressSeen, (n) => n >= 30, { timeoutMs: 60_000, intervalMs: 100 });
    const victim = replicas[victimIndex] as ShimProcess;
    victim.kill();
    expect((await victim.stop()).signal).toBe('SIGKILL');
    killedAt = Date.now();
    killed();

    const outcomes = await Promise.all(flows);
    const tally: Record<string, number> = {};
    for (const o of outcomes) tally[`${o.kind} ${o.status}`] = (tally[`${o.kind} ${o.status}`] ?? 0) + 1;
    const lostKinds = new Set<string>();
    for (const o of outcomes) {
      if (o.status === 'failed') {
        expect(o.kind, o.taskId).not.toBe('idempotent');
        expect(String(o.errorMessage), JSON.stringify(o)).toMatch(LOST_MESSAGE);
        // Lost by the kill, not before it (a survivor whose lock lapsed would lose tasks too), and soon after it.
        expect(o.seenAt, `${o.kind} ${o.taskId} seen failed ${o.seenAt} ms after the kill`).toBeGreaterThanOrEqual(0);
        expect(o.seenAt, `${o.kind} ${o.taskId} seen failed ${o.seenAt} ms after the kill`).toBeLessThanOrEqual(LOSS_BOUND_MS);
        lostKinds.add(o.kind);
      } else {
        expect({ kind: o.kind, status: o.status, text: o.text }).toEqual({ kind: o.kind, status: 'completed', text: o.expected });
      }
    }
    // The victim was running its share of the work: some was lost.
    expect(lostKinds.size, JSON.stringify(tally)).toBeGreaterThan(0);
    // Each idempotent call reached the upstream once, or twice when its first run was lost; never more.
    const calls = new Map<string, number>();
    for (const call of stack.recorder.toolCalls('run_ci_pipeline')) {
      const commit = (call.params?.arguments as { commit: string }).commit;
      calls.set(commit, (calls.get(commit) ?? 0) + 1);
    }
    expect([...calls.keys()].sort()).toEqual(idempotent.map((_, i) => `c${i}`).sort());
    for (const [commit, count] of calls) expect(count, commit).toBeLessThanOrEqual(2);

    // Every listen saw every watched task end, with the status tasks/get reports; those on the victim reconnected.
    const final = new Map(outcomes.map((o) => [o.taskId, o.status]));
    for (const seen of await Promise.all(listening)) {
      for (const [taskId, status] of seen) expect(status, taskId).toBe(final.get(taskId));
    }
    for (const l of listens) expect(l.reconnects > 0, `listen first on ${l.firstBackend}`).toBe(l.firstBackend === victimIndex);
    for (const s of getStreams) expect(s.resumes > 0, `GET stream first on ${s.firstBackend}`).toBe(s.firstBackend === victimIndex);
    for (const s of getStreams) s.close();
  });
});

/** A SEP-2663 listen that listens again, through the proxy, for whatever has not ended when its stream is cut. */
class ResumableListen {
  reconnects = 0;
  private readonly terminal = new Map<string, string>();

  private constructor(
    private readonly url: string,
    private readonly taskIds: string[],
    private stream: ListenStream,
    readonly firstBackend: number,
  ) {}

  static async open(url: string, taskIds: string[]): Promise<ResumableListen> {
    const stream = await ResumableListen.listen(url, taskIds);
    return new ResumableListen(url, taskIds, stream, Number(stream.headers.get(BACKEND_HEADER)));
  }

  private static async listen(url: string, taskIds: string[]): Promise<ListenStream> {
    return retry('subscriptions/listen', () => new Sep2663Client(url).listen({ notifications: { taskIds } }), (s) => s.status === 200);
  }

  /** The terminal status each watched task was reported with. */
  async untilAllTerminal(timeoutMs: number): Promise<Map<string, string>> {
    const deadline = Date.now() + timeoutMs;
    while (this.terminal.size < this.taskIds.length) {
      let message: Json;
      try {
        message = await this.stream.nextMessage(() => true, Math.max(1, deadline - Date.now()));
      } catch (err) {
        if (Date.now() >= deadline) throw err;
        this.stream.close();
        this.reconnects++;
        this.stream = await ResumableListen.listen(this.url, this.taskIds.filter((id) => !this.terminal.has(id)));
        continue;
      }
      if (message.method === 'notifications/tasks' && TERMINAL.includes(message.params.status)) this.terminal.set(message.params.taskId, message.params.status);
    }
    this.stream.close();
    return this.terminal;
  }
}

/** A legacy GET stream that resumes with Last-Event-ID, through the proxy, when its replica dies. */
class ResumableGet {
  resumes = 0;
  private readonly earlier: SseEvent[] = [];

  private constructor(
    private readonly session: LegacySession,
    private stream: SseStream,
    readonly firstBackend: number,
  ) {}

  static async open(session: LegacySession): Promise<ResumableGet> {
    const stream = session.openGetStream();
    const res = await stream.ready;
    if (res.status !== 200) throw new Error(`GET stream: HTTP ${res.status}`);
    return new ResumableGet(session, stream, Number(res.headers.get(BACKEND_HEADER)));
  }

  async next(predicate: (e: SseEvent) => boolean, timeoutMs = 90_000): Promise<SseEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.earlier.find(predicate);
      if (found) return found;
      try {
        return await this.stream.next(predicate, Math.max(1, deadline - Date.now()));
      } catch (err) {
        if (!/stream ended/.test((err as Error).message) || Date.now() >= deadline) throw err;
      }
      this.earlier.push(...this.stream.events);
      const lastId = [...this.earlier].reverse().find((e) => e.id !== undefined)?.id;
      this.resumes++;
      this.stream = await retry(
        'GET stream resume',
        async () => {
          const stream = this.session.openGetStream(lastId);
          const res = await stream.ready;
          if (res.status === 200) return stream;
          stream.close();
          return undefined;
        },
        (s) => s !== undefined,
      ) as SseStream;
    }
  }

  close(): void {
    this.stream.close();
  }
}
