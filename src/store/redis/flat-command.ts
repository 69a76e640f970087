import { Command } from 'ioredis';

type CommandOptions = ConstructorParameters<typeof Command>[2];

const NO_ARGS: string[] = [];
const STAR = 0x2a;
const DOLLAR = 0x24;
const CR = 0x0d;
const LF = 0x0a;
const ZERO = 0x30;

/**
 * A command made from a flat list of strings and written as one Buffer, for the commands of the
 * hot paths (a task script's EVALSHA, a poll's HMGET). ioredis's Command runs `args.flat()`, V8's
 * generic flatten (a property lookup per element), and writes its arguments by appending five
 * pieces each to one string: a rope that V8 flattens and the socket then copies again. A create's
 * script has some forty arguments; the rope was a sixth of the memory a create allocated
 * (docs/decisions/0011-v8-shapes-on-hot-paths.md).
 */
export class FlatCommand extends Command {
  constructor(name: string, args: string[], options: CommandOptions) {
    // ioredis transforms and stringifies the arguments while constructing; these need neither.
    super(name, NO_ARGS, options);
    this.args = args;
  }

  override toWritable(): Buffer {
    const args = this.args as string[];
    const lengths = new Array<number>(args.length);
    const nameLength = Buffer.byteLength(this.name);
    let size = 1 + lineSize(args.length + 1) + bulkSize(nameLength);
    for (let i = 0; i < args.length; i++) {
      lengths[i] = Buffer.byteLength(args[i]!);
      size += bulkSize(lengths[i]!);
    }
    const out = Buffer.allocUnsafe(size);
    out[0] = STAR;
    let at = writeLine(out, 1, args.length + 1);
    at = writeBulk(out, at, this.name, nameLength);
    for (let i = 0; i < args.length; i++) at = writeBulk(out, at, args[i]!, lengths[i]!);
    return out;
  }
}

/**
 * `head` then each of `rest`, as one new array. Made by `concat` rather than an array literal on
 * purpose: V8 watches the arrays a literal makes, and finding these alive at a scavenge (a command
 * waits for its reply) allocates them in the old generation from then on: under tasks/get load
 * that is a full collection every 4 s, and a p99 at half peak of 20 ms instead of 3 ms
 * (docs/decisions/0011-v8-shapes-on-hot-paths.md).
 */
export function commandArgs(head: string[], ...rest: ReadonlyArray<readonly string[]>): string[] {
  return head.concat(...rest);
}

function digits(n: number): number {
  let count = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    count++;
  }
  return count;
}

/** `<n>\r\n` */
function lineSize(n: number): number {
  return digits(n) + 2;
}

/** `$<bytes>\r\n<value>\r\n` */
function bulkSize(bytes: number): number {
  return 1 + lineSize(bytes) + bytes + 2;
}

/** `<n>\r\n`, the digits written one by one rather than made into a string first. */
function writeLine(out: Buffer, at: number, n: number): number {
  const end = at + digits(n);
  for (let i = end - 1; i >= at; i--) {
    out[i] = ZERO + (n % 10);
    n = Math.floor(n / 10);
  }
  out[end] = CR;
  out[end + 1] = LF;
  return end + 2;
}

function writeBulk(out: Buffer, at: number, value: string, bytes: number): number {
  out[at] = DOLLAR;
  at = writeLine(out, at + 1, bytes);
  at += out.write(value, at, bytes, 'utf8');
  out[at] = CR;
  out[at + 1] = LF;
  return at + 2;
}
