import type { ServerResponse } from 'node:http';
import { LimitExceededError } from '../core/errors.js';
import type { SseOut } from '../wire/reply.js';

/** Bytes an SSE stream may leave unsent in this process (docs/decisions/0018-stream-backpressure.md). */
export interface StreamBudgetSettings {
  /** A frame due on a stream with more than this unsent closes the stream instead. */
  maxStreamBytes: number;
  /** While all streams together hold more than this unsent, new streams are refused and lagging ones closed. */
  maxTotalBytes: number;
}

/**
 * The byte accounting of every SSE stream of this replica. Node buffers whatever a response is
 * given until the client reads it, so a client that never reads would park every frame in
 * memory: each stream writes through its BudgetedStream, which closes the stream rather than
 * buffer past the bounds. A closed stream is the client's to reopen: a listen starts again from
 * fresh snapshots, a legacy stream resumes from the shared log with `Last-Event-ID`.
 */
export class StreamBudget {
  private total = 0;
  private cuts = 0;
  private refusals = 0;

  constructor(readonly settings: StreamBudgetSettings) {}

  /** Unsent bytes of all open streams, as last measured (after each write, drain and keep-alive). */
  get bufferedBytes(): number {
    return this.total;
  }

  /** Streams closed so far because their clients did not read fast enough. */
  get cutStreams(): number {
    return this.cuts;
  }

  /** New streams refused so far because the replica was over its total. */
  get refusedStreams(): number {
    return this.refusals;
  }

  get overTotal(): boolean {
    return this.total > this.settings.maxTotalBytes;
  }

  /** Throws the limit error while the replica holds more unsent stream bytes than it may. */
  admit(): void {
    if (!this.overTotal) return;
    this.refusals++;
    throw new LimitExceededError('buffered', this.settings.maxTotalBytes, this.total);
  }

  /** Starts accounting for a stream whose headers are (or are about to be) written. */
  track(res: ServerResponse): BudgetedStream {
    return new BudgetedStream(res, this);
  }

  /** @internal A stream's unsent byte count changed by `delta`. */
  add(delta: number): void {
    this.total += delta;
  }

  /** @internal A stream was closed for its slow reader. */
  counted(): void {
    this.cuts++;
  }
}

/** One SSE response, written only through here. */
export class BudgetedStream implements SseOut {
  private counted = 0;
  /** Unsent bytes at the last keep-alive while behind (-1: not behind then), to tell a stalled client from a slow one. */
  private atLastTick = -1;
  /** Bytes added to the unsent buffer since that keep-alive. */
  private addedSinceTick = 0;
  private ended = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly budget: StreamBudget,
  ) {
    res.on('drain', () => this.measure());
    res.once('close', () => {
      this.ended = true;
      this.budget.add(-this.counted);
      this.counted = 0;
    });
  }

  get closed(): boolean {
    return this.ended || this.res.writableEnded || this.res.destroyed;
  }

  onClose(listener: () => void): void {
    this.res.once('close', listener);
  }

  /** True while the client has not read what the last write left unsent. */
  get behind(): boolean {
    return !this.closed && this.res.writableNeedDrain;
  }

  /**
   * Writes one frame, or closes the stream when the frame would pile onto too much unsent data:
   * this stream's own bound, or a replica over its total while this stream lags. Returns false
   * when the stream is (now) closed.
   */
  write(frame: string): boolean {
    if (this.closed) return false;
    const { maxStreamBytes } = this.budget.settings;
    if (this.res.writableLength > maxStreamBytes || (this.budget.overTotal && this.behind)) {
      this.cut();
      return false;
    }
    const before = this.res.writableLength;
    this.res.write(frame);
    this.addedSinceTick += this.res.writableLength - before;
    this.measure();
    return true;
  }

  /**
   * The keep-alive tick: a comment when the stream is idle; nothing when data is still on its way
   * (that data keeps proxies open), unless nothing of it was read since the last tick, which
   * closes the stream (a client that stopped reading). An ended stream whose last bytes are not
   * read yet is watched the same way, so that it cannot hold them forever. False once closed.
   */
  keepAlive(comment = ': keep-alive\n\n'): boolean {
    if (this.ended || this.res.destroyed) return false;
    const unsent = this.res.writableLength;
    const finishing = this.res.writableEnded;
    if (finishing ? unsent === 0 : !this.behind) {
      this.atLastTick = -1;
      this.addedSinceTick = 0;
      return finishing || this.write(comment);
    }
    // Read since the last tick: what was unsent then, plus what was added, minus what is unsent now.
    if (this.atLastTick >= 0 && this.atLastTick + this.addedSinceTick - unsent <= 0) {
      this.cut();
      return false;
    }
    this.atLastTick = unsent;
    this.addedSinceTick = 0;
    this.measure();
    return true;
  }

  /** Holds writes back until `uncork`, so that a burst of small frames costs one syscall. */
  cork(): void {
    this.res.cork();
  }

  uncork(): void {
    this.res.uncork();
    this.measure();
  }

  /** Resolves true once the client has read what is buffered, false if the stream closes first. */
  drained(): Promise<boolean> {
    if (!this.behind) return Promise.resolve(!this.closed);
    return new Promise((resolve) => {
      const done = (ok: boolean): void => {
        this.res.off('drain', onDrain);
        this.res.off('close', onClose);
        resolve(ok);
      };
      const onDrain = (): void => done(true);
      const onClose = (): void => done(false);
      this.res.on('drain', onDrain);
      this.res.on('close', onClose);
    });
  }

  /** Ends the stream after what is buffered, as a graceful end does. */
  end(frame?: string): void {
    if (this.closed) return;
    if (frame === undefined) this.res.end();
    else this.res.end(frame);
    this.measure();
  }

  /** Drops the connection and what it holds unsent: the client reconnects when it reads again. */
  cut(): void {
    if (this.closed) return;
    this.budget.counted();
    this.res.destroy();
  }

  private measure(): void {
    if (this.ended) return;
    const now = this.res.writableLength;
    this.budget.add(now - this.counted);
    this.counted = now;
  }
}
