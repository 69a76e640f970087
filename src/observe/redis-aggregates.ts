import { connect, disconnect, type RedisConnection } from '../store/redis/connection.js';
import { loadScripts, transactionScripts, type QueueScript, type RunKeysScript } from '../store/redis/scripts.js';
import {
  CLIENT_RETENTION_MS,
  MAX_CLIENTS,
  type AggregateStore,
  type ClientIdentity,
  type ClientRecord,
  type Counters,
  type FlushBatch,
  type RecordingMeta,
} from './aggregates.js';
import { HOUR_RETENTION_MS, MINUTE_RETENTION_MS, type Resolution } from './layout.js';

/** The client table's scripts (src/observe/lua). */
const SCRIPTS = new URL('./lua/', import.meta.url);
/** More fields than any bucket holds. */
const WHOLE_HASH = 2 ** 30;
const CLIENT_KEYS = ['ids', 'first-old', 'last-old', 'first-new', 'last-new', 'seen', 'seq', 'changed'] as const;
/** The keys read-clients-7.lua takes: the table without `seen`. */
const READ_CLIENT_KEYS = ['ids', 'first-old', 'last-old', 'first-new', 'last-new', 'seq', 'changed'] as const;
/**
 * The client table is read whole again this often, whatever the change sequence says: a replica of
 * a version before it (during a rolling upgrade) changes clients without numbering the change.
 */
const CLIENTS_FULL_READ_MS = 10 * 60_000;

/** The client table as this process last read it, and the change sequence it was read at. */
interface ClientTable {
  seq: number;
  clients: Map<string, ClientRecord>;
  fullAt: number;
}

/**
 * The fleet's aggregates in Redis. Every key carries one hash tag, so a Redis Cluster keeps them
 * in one slot and a flush is one MULTI: it applies whole or not at all, which is what lets a
 * replica put a refused batch back without counting anything twice.
 *
 * It has its own connection without an offline queue: while Redis is unreachable a flush fails
 * at once instead of waiting, and the recorder keeps counting in memory.
 */
export class RedisAggregateStore implements AggregateStore {
  readonly kind = 'redis' as const;
  private readonly redis: RedisConnection;
  private readonly tag: string;
  /** Runs inside each flush's MULTI. */
  private readonly markClients: QueueScript;
  private readonly readChangedClients: RunKeysScript;
  private connected = false;
  private table: ClientTable | undefined;
  /** Client table reads one after the other, so that each applies its changes onto the one before. */
  private clientReads: Promise<unknown> = Promise.resolve();

  constructor(options: { url: string; prefix: string; cluster?: boolean }) {
    this.tag = `${options.prefix}:obs:{${options.prefix}:obs}`;
    this.redis = connect({ url: options.url, cluster: options.cluster }, 'unqueued', 'mts-observe');
    this.redis.on('ready', () => {
      this.connected = true;
    });
    this.markClients = transactionScripts(SCRIPTS, ['clients']).clients;
    this.readChangedClients = loadScripts(this.redis, SCRIPTS, ['read-clients'])['read-clients'];
  }

  ready(): boolean {
    return this.connected;
  }

  async write(batch: FlushBatch): Promise<void> {
    const multi = this.redis.multi();
    for (const [resolution, buckets, retention] of [
      ['m', batch.minutes, MINUTE_RETENTION_MS],
      ['h', batch.hours, HOUR_RETENTION_MS],
    ] as const) {
      for (const [start, counters] of buckets) {
        const key = this.bucketKey(resolution, start);
        for (const [name, value] of counters) if (value !== 0) multi.hincrby(key, name, value);
        multi.pexpireat(key, start + retention);
      }
    }
    const meta = this.key('meta');
    // The earliest event any replica ever wrote: recording covers the time since.
    multi.zadd(this.key('since'), 'LT', batch.since, 'since');
    multi.pexpire(this.key('since'), CLIENT_RETENTION_MS);
    if (batch.gaps > 0) multi.hincrby(meta, 'gaps', batch.gaps);
    if (batch.dropped > 0) multi.hincrby(meta, 'dropped', batch.dropped);
    multi.pexpire(meta, CLIENT_RETENTION_MS);
    if (batch.clients.size > 0) {
      const args: string[] = [String(MAX_CLIENTS), String(batch.now - CLIENT_RETENTION_MS)];
      for (const [id, seen] of batch.clients) {
        args.push(id, JSON.stringify(seen.identity), num(seen.firstOld), num(seen.lastOld), num(seen.firstNew), num(seen.lastNew));
      }
      const keys = CLIENT_KEYS.map((name) => this.key(`clients:${name}`));
      this.markClients(multi, keys, args);
      for (const key of keys) multi.pexpire(key, CLIENT_RETENTION_MS);
    }
    const replies = await multi.exec();
    if (!replies) throw new Error('recording transaction aborted');
    const failed = replies.find(([error]) => error);
    if (failed) throw failed[0] as Error;
  }

  async readBuckets(resolution: Resolution, starts: readonly number[]): Promise<Counters[]> {
    if (starts.length === 0) return [];
    const pipeline = this.redis.pipeline();
    // The whole hash as a flat reply (HRANDFIELD with a count above its size returns every field once):
    // ioredis turns an HGETALL reply into an object first, which costs twice the read for an hour bucket.
    for (const start of starts) pipeline.hrandfield(this.bucketKey(resolution, start), WHOLE_HASH, 'WITHVALUES');
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([error, reply]) => {
      if (error) throw error;
      const flat = reply as string[];
      const counters: Counters = new Map();
      for (let i = 0; i + 1 < flat.length; i += 2) counters.set(flat[i] as string, Number(flat[i + 1]));
      return counters;
    });
  }

  /**
   * The client table. After a first whole read, only the clients changed since (by the change
   * sequence clients-8.lua keeps) are read; unchanged records are the same objects as last time.
   * The table is read whole again when its size says a client left it, and every CLIENTS_FULL_READ_MS.
   */
  readClients(): Promise<ClientRecord[]> {
    const read = this.clientReads.then(() => this.readTable());
    this.clientReads = read.catch(() => undefined);
    return read.then((table) => [...table.clients.values()]);
  }

  private async readTable(): Promise<ClientTable> {
    const known = this.table;
    if (known && Date.now() - known.fullAt < CLIENTS_FULL_READ_MS) {
      const keys = READ_CLIENT_KEYS.map((name) => this.key(`clients:${name}`));
      const reply = (await this.readChangedClients(keys, [String(known.seq)])) as unknown[];
      const [size, seq] = [Number(reply[0]), Number(reply[1])];
      const clients = new Map(known.clients);
      for (let i = 2; i + 5 < reply.length; i += 6) {
        const id = reply[i] as string;
        const json = reply[i + 1] as string;
        const identity = clients.get(id)?.identity ?? (json === '' ? undefined : (JSON.parse(json) as ClientIdentity));
        if (!identity) continue;
        clients.set(id, { id, identity, firstOld: score(reply[i + 2]), lastOld: score(reply[i + 3]), firstNew: score(reply[i + 4]), lastNew: score(reply[i + 5]) });
      }
      // A sequence behind the one seen: the table expired and started again.
      if (clients.size === size && seq >= known.seq) return (this.table = { seq, clients, fullAt: known.fullAt });
    }
    return (this.table = await this.readWholeTable());
  }

  private async readWholeTable(): Promise<ClientTable> {
    const fullAt = Date.now();
    const multi = this.redis.multi();
    multi.get(this.key('clients:seq'));
    multi.hgetall(this.key('clients:ids'));
    for (const name of CLIENT_KEYS.slice(1, 5)) multi.zrange(this.key(`clients:${name}`), 0, -1, 'WITHSCORES');
    const replies = await multi.exec();
    if (!replies) throw new Error('client table read aborted');
    for (const [error] of replies) if (error) throw error;
    const seq = Number(replies[0]?.[1] ?? 0);
    const ids = (replies[1]?.[1] ?? {}) as Record<string, string>;
    const [firstOld, lastOld, firstNew, lastNew] = replies.slice(2).map(([, flat]) => scores(flat as string[]));
    const clients = new Map<string, ClientRecord>();
    for (const [id, json] of Object.entries(ids)) {
      clients.set(id, {
        id,
        identity: JSON.parse(json) as ClientIdentity,
        firstOld: firstOld?.get(id),
        lastOld: lastOld?.get(id),
        firstNew: firstNew?.get(id),
        lastNew: lastNew?.get(id),
      });
    }
    return { seq, clients, fullAt };
  }

  async readMeta(): Promise<RecordingMeta> {
    const [meta, since] = await Promise.all([this.redis.hgetall(this.key('meta')), this.redis.zscore(this.key('since'), 'since')]);
    return {
      since: since === null ? undefined : Number(since),
      gaps: Number(meta.gaps ?? 0),
      dropped: Number(meta.dropped ?? 0),
    };
  }

  async close(): Promise<void> {
    await disconnect(this.redis);
  }

  private key(name: string): string {
    return `${this.tag}:${name}`;
  }

  private bucketKey(resolution: Resolution, start: number): string {
    return this.key(`${resolution}:${start}`);
  }
}

function num(value: number | undefined): string {
  return value === undefined ? '' : String(value);
}

function score(value: unknown): number | undefined {
  return value === '' || value === null || value === undefined ? undefined : Number(value);
}

function scores(flat: string[]): Map<string, number> {
  const map = new Map<string, number>();
  for (let i = 0; i + 1 < flat.length; i += 2) map.set(flat[i] as string, Number(flat[i + 1]));
  return map;
}
