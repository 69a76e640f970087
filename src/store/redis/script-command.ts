import { Command } from 'ioredis';

const CRLF = '\r\n';

/**
 * A command whose wire form is joined in one pass. ioredis's own `toWritable` appends five pieces
 * per argument to one string, leaving a rope of small strings to flatten and collect; a task's
 * creation script has some forty arguments, and that rope was the largest allocation of a create
 * (docs/benchmarks.md, "Creation"). Same bytes; Buffer arguments take ioredis's way.
 */
export class ScriptCommand extends Command {
  override toWritable(socket: object): string | Buffer {
    const args = this.args;
    const parts: string[] = [`*${args.length + 1}${CRLF}$${Buffer.byteLength(this.name)}${CRLF}${this.name}${CRLF}`];
    for (const arg of args) {
      if (typeof arg !== 'string') return super.toWritable(socket);
      parts.push(`$${Buffer.byteLength(arg)}${CRLF}`, arg, CRLF);
    }
    return parts.join('');
  }
}
