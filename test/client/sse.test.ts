import { describe, expect, it } from 'vitest';
import { LineSplitter, readSseData } from '../../packages/client/src/sse.js';

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function collect(chunks: string[]): Promise<string[]> {
  const out: string[] = [];
  for await (const data of readSseData(streamOf(chunks))) out.push(data);
  return out;
}

describe('readSseData', () => {
  it('yields each event, skipping comments and other fields', async () => {
    const text = ': keep-alive\n\nevent: message\nid: 7\ndata: {"a":1}\n\ndata:{"b":2}\n\n';
    expect(await collect([text])).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('joins multi-line data and accepts CRLF, CR and LF', async () => {
    expect(await collect(['data: one\r\ndata: two\r\n\r\ndata: three\rdata: four\r\rdata: five\n\n'])).toEqual([
      'one\ntwo',
      'three\nfour',
      'five',
    ]);
  });

  it('handles any split of the bytes, including a CRLF cut in two and a split multi-byte character', async () => {
    const text = '\uFEFFdata: {"msg":"météo"}\r\n\r\n: c\r\ndata: {"n":2}\r\n\r\n';
    const bytes = new TextEncoder().encode(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.slice(0, cut));
          controller.enqueue(bytes.slice(cut));
          controller.close();
        },
      });
      const out: string[] = [];
      for await (const data of readSseData(stream)) out.push(data);
      expect(out).toEqual(['{"msg":"météo"}', '{"n":2}']);
    }
  });

  it('drops an event the stream ended before closing', async () => {
    expect(await collect(['data: done\n\ndata: cut off'])).toEqual(['done']);
  });
});

describe('LineSplitter', () => {
  it('keeps a partial line until its end arrives', () => {
    const lines = new LineSplitter();
    expect(lines.push('ab')).toEqual([]);
    expect(lines.push('c\r')).toEqual(['abc']);
    expect(lines.push('\nd\n')).toEqual(['d']);
  });
});
