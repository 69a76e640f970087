/** What the official SDK's `callToolStream` yields, as far as the tests read it. */
export type StreamMessage = { type: string; task?: { taskId: string; status: string }; result?: unknown; error?: { message?: string } };

/** Every message of an SDK response stream, once it ended. */
export async function drain<T = StreamMessage>(stream: AsyncGenerator<T>): Promise<T[]> {
  const seen: T[] = [];
  for await (const message of stream) seen.push(message);
  return seen;
}
