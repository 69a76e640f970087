import { describe, expect, it } from 'vitest';
import { useStack } from '../../support/e2e-stack.js';
import { writeTokensFile } from '../../support/observe.js';
import { Sep2663Client, type Reply } from '../../support/sep2663-client.js';

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdefghij';
const stack = useStack({
  stores: ['redis'],
  args: ['--tokens', writeTokensFile({ [ALICE]: 'alice', [BOB]: 'bob' })],
  env: { SHIM_MAX_BODY_BYTES: String(8 * 1024 * 1024) },
});
const UNKNOWN_ID = 'AAAAAAAAAAAAAAAAAAAAAA';
/** Arguments, progress message and result each carry this much: a record of about 7.5 MB. */
const LABEL = 'x'.repeat(2_500_000);
const ROUNDS = 30;
/** Reading a record this size costs tens of ms; checking one field, well under one. */
const ENVELOPE_MS = 5;

/**
 * Fastest ms of `foreign` and of `unknown`, interleaved so that drift in the host's speed hits
 * both alike. A busy host only ever adds time, so the fastest of many is the request's own cost.
 */
async function race(foreign: () => Promise<unknown>, unknown: () => Promise<unknown>): Promise<{ foreign: number; unknown: number }> {
  const times = { foreign: [] as number[], unknown: [] as number[] };
  for (let i = 0; i < ROUNDS + 3; i++) {
    for (const [name, run] of [['foreign', foreign], ['unknown', unknown]] as const) {
      const started = performance.now();
      await run();
      if (i >= 3) times[name].push(performance.now() - started);
    }
  }
  return { foreign: Math.min(...times.foreign), unknown: Math.min(...times.unknown) };
}

describe('a large task of another principal answers in the time an unknown id takes', () => {
  const alice = (): Sep2663Client => new Sep2663Client(stack.shim().url, { token: ALICE });
  const bob = (): Sep2663Client => new Sep2663Client(stack.shim().url, { token: BOB });

  it('for tasks/get, tasks/update and a listen snapshot, with identical answers', async () => {
    const created = await alice().createTask('slow_compute', { seconds: 1.5, label: LABEL });
    const done = await alice().waitForStatus(created.taskId, 'completed', { timeoutMs: 20_000 });
    expect(JSON.stringify(done).length).toBeGreaterThan(LABEL.length);

    const get = (taskId: string) => () => bob().getTask(taskId, { id: 1 });
    const update = (taskId: string) => () => bob().updateTask(taskId, { key: { action: 'accept' } }, { id: 1 });
    const listen = (taskId: string) => async () => {
      const stream = await bob().listen({ notifications: { taskIds: [taskId] } }, { id: 1 });
      const ack = await stream.nextMessage();
      stream.close();
      return ack;
    };
    for (const [name, make] of [['tasks/get', get], ['tasks/update', update], ['listen', listen]] as const) {
      const answers = await Promise.all([make(created.taskId)(), make(UNKNOWN_ID)()]);
      if (name === 'listen') expect(answers[0]).toEqual(answers[1]);
      else expect((answers[0] as Reply).text, name).toBe((answers[1] as Reply).text);
      const fastest = await race(make(created.taskId), make(UNKNOWN_ID));
      expect(fastest.foreign - fastest.unknown, `${name}: ${JSON.stringify(fastest)}`).toBeLessThan(ENVELOPE_MS);
    }
  }, 120_000);
});
