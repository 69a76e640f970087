import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { LegacySession } from '../../support/legacy-client.js';
import { pollUntil, type Json } from '../../support/sep2663-client.js';
import { ALICE, useSep2663Stack } from '../../support/sep2663-upstream-stack.js';
import type { ShimProcess } from '../../support/shim-process.js';

/**
 * The fleet's request cancels (docs/decisions/0031-fleet-request-cancels.md) while Redis is away:
 * two replicas on one Redis in front of a pure 2026-07-28 server, the call on replica A, the
 * cancel through replica B. Its own stack, since the test stops that Redis.
 */
const stack = useSep2663Stack({ stores: ['redis'] });

// Runs in order: the second test needs Redis back.
describe('a legacy cancel through another replica while Redis is away', () => {
  let replicaB: ShimProcess;
  beforeAll(async () => {
    replicaB = await stack.startShim();
  });

  const replicaA = () => stack.shim('redis').url;
  const cancelAt = (session: LegacySession, requestId: string) =>
    session.at(replicaB.url).post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } });

  it('answers 503 with Retry-After when the cancel cannot reach the fleet', async () => {
    const session = await LegacySession.open(replicaA(), { token: ALICE });
    // Replica B reads the session now, so that the cancel right after finds it without Redis.
    expect((await session.at(replicaB.url).post({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' })).status).toBe(202);
    await stack.redis.halt();
    try {
      const reply = await cancelAt(session, 'unreachable-call');
      expect(reply.status).toBe(503);
      expect(reply.headers.get('retry-after')).toBe('1');
      expect(reply.body).toMatchObject({ id: null, error: { code: -32603, data: { retryable: true } } });
    } finally {
      await stack.redis.restart();
    }
  });

  it('hears cancels again once Redis is back, without a restart of either replica', async () => {
    const session = await pollUntil(
      () => LegacySession.open(replicaA(), { token: ALICE }).catch(() => undefined),
      (opened) => opened !== undefined,
      { timeoutMs: 15_000, intervalMs: 200 },
    );
    if (!session) throw new Error('no session once Redis was back');
    const label = 'after-outage';
    const upstreamTask = async () => (await stack.stats()).tasks.find((t) => t.arguments.label === label);
    // Both replicas subscribe again on their own (the shims' default prefix, mts).
    const admin = new Redis(stack.redis.url);
    try {
      await pollUntil(async () => (await admin.pubsub('NUMSUB', 'mts:sess-cancels'))[1], (subscribers) => subscribers === 2, { timeoutMs: 15_000, intervalMs: 100 });
    } finally {
      admin.disconnect();
    }
    const call = session.post({ jsonrpc: '2.0', id: 'after-outage', method: 'tools/call', params: { name: 'slow', arguments: { seconds: 30, label } } });
    await pollUntil(upstreamTask, (t) => t?.status === 'working');
    expect((await cancelAt(session, 'after-outage')).status).toBe(202);
    const answer = (await call).body as Json;
    expect(answer).toMatchObject({ id: 'after-outage', error: { code: -32800 } });
    expect((await pollUntil(upstreamTask, (t) => t?.status === 'cancelled', { timeoutMs: 10_000 }))?.cancels).toBe(1);
  });
});
