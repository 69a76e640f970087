/**
 * The stream side of the soak: N subscriptions/listen streams, each watching a few live tasks on
 * one replica. A stream that has seen all its tasks end is closed and reopened on the next
 * replica with new ones; a stream that misses a terminal notification the task load saw long ago
 * counts as an error.
 */
import { Agent, request, type ClientRequest } from 'node:http';
import { sep2663 } from './mcp.js';
import { ErrorTally } from './soak-errors.js';

export interface ListenLoadOptions {
  urls: string[];
  streams: number;
  liveTasks: () => string[];
  log: (line: string) => void;
}

const TASKS_PER_STREAM = 5;
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const WATCHDOG_MS = 5_000;
/** A stream with no notification of a task's end this long after the task ended missed it. */
const MISSED_AFTER_MS = 15_000;

interface Stream {
  req: ClientRequest;
  waiting: Set<string>;
  openedAt: number;
}

export class ListenLoad {
  readonly errors = new ErrorTally();
  notifications = 0;
  reopened = 0;
  private readonly agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  private readonly streams = new Set<Stream>();
  private running = false;
  private next = 0;
  private watchdog: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: ListenLoadOptions,
    private readonly endedAt: (taskId: string) => number | undefined = () => undefined,
  ) {}

  get open(): number {
    return this.streams.size;
  }

  start(): void {
    this.running = true;
    // Streams open once there are tasks to watch, spread over the task load's ramp.
    for (let i = 0; i < this.options.streams; i++) setTimeout(() => this.open1(), 2_000 + i * 40);
    this.watchdog = setInterval(() => this.check(), WATCHDOG_MS);
  }

  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.watchdog);
    for (const stream of this.streams) stream.req.destroy();
    this.streams.clear();
    this.agent.destroy();
  }

  private open1(): void {
    if (!this.running) return;
    const live = this.options.liveTasks();
    const taskIds = new Set<string>();
    for (let i = 0; i < TASKS_PER_STREAM && live.length > 0; i++) taskIds.add(live[Math.floor(Math.random() * live.length)]!);
    if (taskIds.size === 0) {
      setTimeout(() => this.open1(), 1_000);
      return;
    }
    const url = this.options.urls[this.next++ % this.options.urls.length]!;
    const { headers, body } = sep2663('subscriptions/listen', { notifications: { taskIds: [...taskIds] } });
    const stream: Stream = { req: undefined as unknown as ClientRequest, waiting: new Set(taskIds), openedAt: Date.now() };
    stream.req = request(url, { method: 'POST', headers, agent: this.agent }, (res) => {
      if (res.statusCode !== 200) {
        this.errors.add(`listen: HTTP ${res.statusCode}`);
        res.resume();
        this.replace(stream);
        return;
      }
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = event.split('\n').find((line) => line.startsWith('data:'));
          if (data) this.message(stream, data.slice(5).trim());
        }
      });
      res.on('end', () => {
        if (this.streams.has(stream)) {
          this.errors.add('listen: stream ended by the server');
          this.replace(stream);
        }
      });
      res.on('error', () => undefined);
    });
    stream.req.on('error', (err) => {
      if (!this.streams.has(stream)) return;
      this.errors.add(`listen: ${err.message.slice(0, 80)}`);
      this.replace(stream);
    });
    stream.req.end(body);
    this.streams.add(stream);
  }

  private message(stream: Stream, data: string): void {
    let msg: { method?: string; params?: { taskId?: string; status?: string } };
    try {
      msg = JSON.parse(data);
    } catch {
      this.errors.add('listen: unparsable event');
      return;
    }
    if (msg.method !== 'notifications/tasks') return;
    this.notifications++;
    const { taskId, status } = msg.params ?? {};
    if (taskId && status && TERMINAL.has(status)) stream.waiting.delete(taskId);
    if (stream.waiting.size === 0) {
      this.reopened++;
      this.replace(stream);
    }
  }

  private check(): void {
    const now = Date.now();
    for (const stream of [...this.streams]) {
      const missed = [...stream.waiting].filter((id) => {
        const ended = this.endedAt(id);
        return ended !== undefined && now - Math.max(ended, stream.openedAt) > MISSED_AFTER_MS;
      });
      if (missed.length === 0) continue;
      this.errors.add('listen: missed a terminal notification');
      this.replace(stream);
    }
  }

  private replace(stream: Stream): void {
    if (!this.streams.delete(stream)) return;
    stream.req.destroy();
    if (this.running) setTimeout(() => this.open1(), 100);
  }
}
