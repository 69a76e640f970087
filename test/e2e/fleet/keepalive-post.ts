import { Agent, request } from 'node:http';

export interface RawAnswer {
  status: number;
  contentType: string;
  text: string;
}

/**
 * Many small POSTs over a few kept-alive connections: fetch opens and parses more than a
 * 160k-request test can afford on a two-core host.
 */
export class KeepAlivePoster {
  private readonly agent: Agent;

  constructor(maxSockets: number) {
    this.agent = new Agent({ keepAlive: true, maxSockets });
  }

  /**
   * A kept-alive connection the server closed for idleness just as it was reused fails with a
   * reset before any answer: that request never reached the server and is sent again.
   */
  async post(url: string, headers: Record<string, string>, body: string): Promise<RawAnswer> {
    try {
      return await this.once(url, headers, body);
    } catch (err) {
      if ((err as { reusedSocket?: boolean }).reusedSocket && (err as NodeJS.ErrnoException).code === 'ECONNRESET') return this.once(url, headers, body);
      throw err;
    }
  }

  private once(url: string, headers: Record<string, string>, body: string): Promise<RawAnswer> {
    const target = new URL(url);
    return new Promise((resolve, reject) => {
      const req = request(
        { agent: this.agent, hostname: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'] ?? '', text: Buffer.concat(chunks).toString('utf8') }),
          );
          res.on('error', reject);
        },
      );
      req.on('error', (err) => reject(Object.assign(err, { reusedSocket: req.reusedSocket })));
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Runs `work` on every item with at most `parallel` in flight; resolves when all are done. */
export async function forEachParallel<T>(items: readonly T[], parallel: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      await work(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, lane));
}
