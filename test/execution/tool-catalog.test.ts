import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { CachedToolCatalog } from '../../src/execution/tool-catalog.js';
import { pollUntil } from '../support/sep2663-client.js';

const tool = (name: string): Tool => ({ name, inputSchema: { type: 'object' }, execution: { taskSupport: 'forbidden' } });
const TASKS = { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } };

describe('CachedToolCatalog', () => {
  it('knows nothing and declares no tasks before the upstream first answered', () => {
    const catalog = new CachedToolCatalog(async () => [tool('a')], async () => TASKS);
    expect(catalog.declaresTasks()).toBe(false);
  });

  it('reads whether the upstream declares tasks for tools/call with its listing', async () => {
    const declaring = new CachedToolCatalog(async () => [tool('a')], async () => TASKS);
    expect(await declaring.get('a')).toMatchObject({ name: 'a' });
    expect(declaring.declaresTasks()).toBe(true);
    const plain = new CachedToolCatalog(async () => [tool('a')], async () => ({ tools: { listChanged: true } }));
    await plain.get('a');
    expect(plain.declaresTasks()).toBe(false);
  });

  it('answers all() from the cache while it is fresh and lists again once it is stale', async () => {
    let listings = 0;
    const catalog = new CachedToolCatalog(
      async () => [tool(`t${++listings}`)],
      async () => ({}),
      200,
    );
    expect((await catalog.all()).map((t) => t.name)).toEqual(['t1']);
    expect((await catalog.all()).map((t) => t.name)).toEqual(['t1']);
    const names = async () => (await catalog.all()).map((t) => t.name).join();
    // Stale after 200 ms: the next read lists again, once.
    expect(await pollUntil(names, (n) => n !== 't1', { timeoutMs: 2_000, intervalMs: 20 })).toBe('t2');
    expect(listings).toBe(2);
  });

  it('rejects all() while the upstream does not answer', async () => {
    const catalog = new CachedToolCatalog(async () => Promise.reject(new Error('connect ECONNREFUSED')), async () => ({}));
    await expect(catalog.all()).rejects.toThrow('ECONNREFUSED');
  });
});
