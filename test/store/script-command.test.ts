import { Command } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ScriptCommand } from '../../src/store/redis/script-command.js';

const socket = {};

function bytes(written: string | Buffer): Buffer {
  return typeof written === 'string' ? Buffer.from(written, 'utf8') : written;
}

describe('ScriptCommand', () => {
  it('writes the very bytes ioredis writes, multi-byte text, empty strings and numbers included', () => {
    const args = ['0123abcd', 3, ['k:{t}', 'q:{t}', ''], ['héllo wörld ✓ 𝄞', '', '{"a":"\\r\\n"}', '-1', 'x'.repeat(5_000)]];
    const ours = new ScriptCommand('evalsha', args as string[], { replyEncoding: 'utf8' }).toWritable(socket);
    const theirs = new Command('evalsha', args as string[], { replyEncoding: 'utf8' }).toWritable(socket);
    expect(typeof ours).toBe('string');
    expect(bytes(ours).equals(bytes(theirs))).toBe(true);
    expect(String(ours).startsWith('*11\r\n$7\r\nevalsha\r\n$8\r\n0123abcd\r\n$1\r\n3\r\n')).toBe(true);
  });

  it('leaves a command with a Buffer argument to ioredis', () => {
    const args = ['sha', 1, 'key', Buffer.from([0, 255, 10])];
    const ours = new ScriptCommand('evalsha', args as string[]).toWritable(socket);
    const theirs = new Command('evalsha', args as string[]).toWritable(socket);
    expect(bytes(ours).equals(bytes(theirs))).toBe(true);
  });
});
