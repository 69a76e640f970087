import type { NativeOutcome } from '../core/ports.js';
import { UPSTREAM_CANCEL_MESSAGES } from '../mapping/upstream-statuses.js';

/**
 * What the upstream made of a forwarded `tasks/cancel`: its task is `cancelled` (a 2025-11-25
 * answer can say so); it took the cancel but its task may still run (a 2025-11-25 task that
 * cancels cooperatively, or any SEP-2663 `tasks/cancel` ack); it refused (an error: its task was terminal,
 * or it no longer knows it); or it did not answer within the grace.
 */
export type CancelAnswer = { kind: 'confirmed' } | { kind: 'pending' } | { kind: 'refused'; why: string } | { kind: 'unanswered' };

/** One `tasks/cancel` within `timeoutMs`: the answer, or undefined when the upstream could not be reached (it is sent again). */
export type CancelAttempt = (timeoutMs: number) => Promise<CancelAnswer | undefined>;

export const CONFIRMED_CANCEL: NativeOutcome = { status: 'cancelled', statusMessage: UPSTREAM_CANCEL_MESSAGES.confirmed };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `tasks/cancel`, sent again while the upstream cannot be reached, until it answers or `deadline` passes. */
export async function sendCancel(attempt: CancelAttempt, deadline: number, retryBaseMs: number): Promise<CancelAnswer> {
  for (let n = 0; Date.now() < deadline; n++) {
    const answer = await attempt(Math.max(1, deadline - Date.now()));
    if (answer) return answer;
    await sleep(Math.min(retryBaseMs * 2 ** n, Math.max(0, deadline - Date.now())));
  }
  return { kind: 'unanswered' };
}

/**
 * The cancel of one mirrored upstream task (docs/decisions/0024-cancel-awaits-the-upstream.md),
 * shared by the 2025-11-25 and the SEP-2663 mirror: `tasks/cancel` goes upstream once, when a
 * client asks (`follow`) or the record ended elsewhere (`settle`), and the upstream has the grace
 * to confirm it; the mirror keeps following the task meanwhile, since it may end otherwise first.
 */
export class ClientCancel {
  private sent: Promise<CancelAnswer> | undefined;
  private answer: CancelAnswer | undefined;
  /** Epoch ms at which the grace ends; Infinity while no cancel went upstream. */
  deadline = Infinity;

  constructor(
    private readonly graceMs: number,
    private readonly retryBaseMs: number,
    private readonly attempt: CancelAttempt,
    /** Hears the cancel start and its answer arrive: the mirror re-plans its wait. */
    private readonly onChange: () => void = () => undefined,
  ) {}

  /** A client's cancel went upstream: an upstream task that ends `cancelled` confirms it. */
  get started(): boolean {
    return this.sent !== undefined;
  }

  get answered(): boolean {
    return this.answer !== undefined;
  }

  get confirmed(): boolean {
    return this.answer?.kind === 'confirmed';
  }

  /** True once the grace passed with no confirmation and no other end of the upstream task. */
  expired(now: number): boolean {
    return now >= this.deadline;
  }

  /** Sends the cancel on `signal`'s abort (also one that came before); returns what stops listening. */
  follow(signal: AbortSignal | undefined): () => void {
    if (!signal) return () => undefined;
    const start = (): void => this.start();
    signal.addEventListener('abort', start);
    if (signal.aborted) start();
    return () => signal.removeEventListener('abort', start);
  }

  start(): void {
    if (this.sent) return;
    this.deadline = Date.now() + this.graceMs;
    this.sent = sendCancel(this.attempt, this.deadline, this.retryBaseMs);
    void this.sent.then((answer) => {
      this.answer = answer;
      this.onChange();
    });
    this.onChange();
  }

  /** The record ended elsewhere: the cancel goes upstream (once), and what it answers is only for the record's sake (which is already final). */
  async settle(): Promise<NativeOutcome> {
    this.start();
    const answer = await this.sent!;
    return answer.kind === 'confirmed' ? CONFIRMED_CANCEL : this.unconfirmed();
  }

  /** The grace passed without the upstream's confirmation; `why` is what the upstream answered instead, when it refused. */
  unconfirmed(why = this.answer?.kind === 'refused' ? this.answer.why : undefined): NativeOutcome {
    return { status: 'cancelled', statusMessage: UPSTREAM_CANCEL_MESSAGES.unconfirmed(this.graceMs, why) };
  }
}
