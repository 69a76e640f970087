import { Command } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { FlatCommand } from '../../src/store/redis/flat-command.js';

const socket = {};

function bytes(written: string | Buffer): Buffer {
  return typeof written === 'string' ? Buffer.from(written, 'utf8') : written;
}

describe('FlatCommand', () => {
  // Lengths of one to four digits, and ten arguments or more.
  const values = ['héllo wörld ✓ 𝄞', '', '{"a":"\\r\\n"}', '-1', ...[9, 10, 99, 100, 999, 1_000].map((n) => 'x'.repeat(n))];
  const flat = ['0123abcd', '2', 'k:{t}', 'q:{t}', ...values];
  const nested = ['0123abcd', 2, ['k:{t}', 'q:{t}'], values];

  it('writes the very bytes ioredis writes for the same arguments: multi-byte text, empty strings, lengths of every digit count', () => {
    const ours = new FlatCommand('evalsha', flat, { replyEncoding: 'utf8' }).toWritable();
    const theirs = new Command('evalsha', nested as string[], { replyEncoding: 'utf8' }).toWritable(socket);
    expect(bytes(ours).equals(bytes(theirs))).toBe(true);
    expect(bytes(ours).toString().startsWith('*15\r\n$7\r\nevalsha\r\n$8\r\n0123abcd\r\n$1\r\n2\r\n$5\r\nk:{t}\r\n')).toBe(true);
  });

  it('names the same keys as ioredis, which a Cluster routes by', () => {
    const ours = new FlatCommand('evalsha', flat, { replyEncoding: 'utf8' });
    const theirs = new Command('evalsha', nested as string[], { replyEncoding: 'utf8' });
    expect(ours.getKeys()).toEqual(['k:{t}', 'q:{t}']);
    expect(ours.getSlot()).toBe(theirs.getSlot());
  });

  it('resolves with the reply in the encoding asked for', async () => {
    const command = new FlatCommand('evalsha', flat, { replyEncoding: 'utf8' });
    command.resolve(Buffer.from('OK'));
    await expect(command.promise).resolves.toBe('OK');
  });
});
