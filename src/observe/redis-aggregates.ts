import { readFileSync } from 'node:fs';
import { connect, disconnect, type RedisConnection } from '../store/redis/connection.js';
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

const CLIENTS_SCRIPT = readFileSync(new URL('./lua/clients.lua', import.meta.url), 'utf8');
const CLIENT_KEYS = ['ids', 'first-old', 'last-old', 'first-new', 'last-new', 'seen'] as const;

type WithClientsScript = { mtsObserveClients(...args: (string | number)[]): Promise<unknown> };

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
  private connected = false;

  constructor(options: { url: string; prefix: string; cluster?: boolean }) {
    this.tag = `${options.prefix}:obs:{${options.prefix}:obs}`;
    this.redis = connect({ url: options.url, cluster: options.cluster }, 'unqueued', 'mts-observe');
    this.redis.on('ready', () => {
      this.connected = true;
    });
    this.redis.defineCommand('mtsObserveClients', { numberOfKeys: CLIENT_KEYS.length, lua: CLIENTS_SCRIPT });
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
      (multi as unknown as WithClientsScript).mtsObserveClients(...keys, ...args);
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
    for (const start of starts) pipeline.hgetall(this.bucketKey(resolution, start));
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([error, hash]) => {
      if (error) throw error;
      const counters: Counters = new Map();
      for (const [name, value] of Object.entries(hash as Record<string, string>)) counters.set(name, Number(value));
      return counters;
    });
  }

  async readClients(): Promise<ClientRecord[]> {
    const pipeline = this.redis.pipeline();
    pipeline.hgetall(this.key('clients:ids'));
    for (const name of CLIENT_KEYS.slice(1, 5)) pipeline.zrange(this.key(`clients:${name}`), 0, -1, 'WITHSCORES');
    const replies = (await pipeline.exec()) ?? [];
    for (const [error] of replies) if (error) throw error;
    const ids = (replies[0]?.[1] ?? {}) as Record<string, string>;
    const [firstOld, lastOld, firstNew, lastNew] = replies.slice(1).map(([, flat]) => scores(flat as string[]));
    return Object.entries(ids).map(([id, json]) => ({
      id,
      identity: JSON.parse(json) as ClientIdentity,
      firstOld: firstOld?.get(id),
      lastOld: lastOld?.get(id),
      firstNew: firstNew?.get(id),
      lastNew: lastNew?.get(id),
    }));
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

function scores(flat: string[]): Map<string, number> {
  const map = new Map<string, number>();
  for (let i = 0; i + 1 < flat.length; i += 2) map.set(flat[i] as string, Number(flat[i + 1]));
  return map;
}
