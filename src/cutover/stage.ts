import type { ServerResponse } from 'node:http';
import type { LegacyMode } from '../config/cutover.js';
import type { JsonRpcId } from '../wire/jsonrpc/message.js';
import type { Reply } from '../wire/reply.js';
import type { CutoverControls, CutoverState } from './controls.js';

/** Requests about tasks on the old wires: what `off` refuses. Everything else of a session is not task traffic. */
const TASK_METHODS: ReadonlySet<string> = new Set(['tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel', 'tasks/create', 'tasks/status']);

/** How many legacy-mode changes the dashboard's timeline keeps. */
const MAX_HISTORY = 100;

export interface LegacyModeChange {
  /** Epoch ms. */
  at: number;
  mode: LegacyMode;
}

/**
 * The cutover stage: runs on every old-API request after the HTTP edge has authenticated it and
 * before the legacy adapter sees it. It adds the `Deprecation`/`Sunset`/`Link` headers and decides
 * the refusals: a brownout window refuses everything, `off` every task request, `drain` every task
 * creation. It only reads the message: nothing here waits, so a refusal costs no store access.
 * A reload swaps the controls; the legacy mode's changes are kept for the dashboard's timeline.
 */
export class CutoverStage {
  private current: CutoverControls;
  private readonly changes: LegacyModeChange[];

  constructor(
    controls: CutoverControls,
    private readonly now: () => number = Date.now,
  ) {
    this.current = controls;
    this.changes = [{ at: now(), mode: controls.legacy }];
  }

  get controls(): CutoverControls {
    return this.current;
  }

  /** The legacy mode since start, oldest first: the first entry is the mode the replica started with. */
  get history(): readonly LegacyModeChange[] {
    return this.changes;
  }

  /** What the dashboard shows (`GET /dashboard/api/cutover`). */
  state(now: number = this.now()): CutoverState {
    return { ...this.current.state(now), legacyHistory: this.changes.map((c) => ({ at: new Date(c.at).toISOString(), mode: c.mode })) };
  }

  replace(controls: CutoverControls): void {
    if (controls.legacy !== this.current.legacy) {
      this.changes.push({ at: this.now(), mode: controls.legacy });
      if (this.changes.length > MAX_HISTORY) this.changes.splice(1, 1);
    }
    this.current = controls;
  }

  /** The stage's answer to an old-API request (`parsed`: its JSON body, absent for GET and DELETE), or undefined to let it through. */
  legacy(res: ServerResponse, parsed: unknown): Reply | undefined {
    const controls = this.current;
    for (const [name, value] of controls.headers) res.setHeader(name, value);
    const now = this.now();
    const window = controls.brownoutAt(now);
    if (window) return controls.brownedOut(requestId(parsed) ?? null, window, now);
    if (controls.legacy === 'on') return undefined;
    const id = requestId(parsed);
    // Notifications and a client's answers to pushes are not requests: nothing to answer them with.
    if (id === undefined) return undefined;
    const { method, params } = parsed as { method?: unknown; params?: { task?: unknown } };
    const taskCall = method === 'tools/call' && typeof params === 'object' && params !== null && params.task !== undefined;
    if (controls.legacy === 'off') return taskCall || TASK_METHODS.has(method as string) ? controls.switchedOff(id) : undefined;
    return taskCall || method === 'tasks/create' ? controls.drained(id) : undefined;
  }
}

/** The id of a JSON-RPC request; undefined for anything else (a bodyless request, a notification, a response). */
function requestId(parsed: unknown): JsonRpcId | undefined {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const { id, method } = parsed as { id?: unknown; method?: unknown };
  if (typeof method !== 'string') return undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}
