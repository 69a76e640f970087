import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisTaskStore } from '../../src/store/redis/redis-store.js';
import { newTask } from '../support/new-task.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';

let server: RedisServer;
let store: RedisTaskStore;

beforeAll(async () => {
  server = await startRedis();
  store = new RedisTaskStore({ url: server.url, prefix: 'create' });
});

afterAll(async () => {
  await store?.close();
  await server?.stop();
});

describe('RedisTaskStore.create sent twice', () => {
  it('answers the same creation sent again (ioredis resends a script that had no answer) as created, unchanged', async () => {
    const task = newTask();
    const first = await store.create(task);
    await store.setStatusMessage(task.taskId, 'started', Date.now());
    expect(await store.create({ ...task })).toEqual(first);
    expect((await store.load(task.taskId))?.statusMessage).toBe('started');
  });

  it('still refuses the id with another creation time: that is another task', async () => {
    const task = newTask();
    await store.create(task);
    await expect(store.create({ ...task, createdAt: task.createdAt + 1 })).rejects.toThrow(/already exists/);
  });
});
