import type { IncomingMessage } from 'node:http';

const MAX_BODY_BYTES = 4 * 1024 * 1024;

export class BodyError extends Error {
  constructor(
    readonly status: 400 | 413,
    readonly rpcCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** The server must see the body to tell `initialize` (which opens a session) from other posts. */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new BodyError(413, -32600, 'Request body too large');
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new BodyError(400, -32700, 'Parse error: body is not valid JSON');
  }
}
