import { describe, expect, it } from 'vitest';
import { parseSse, type SseMessage } from './sse.js';

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function collect(chunks: string[]): Promise<SseMessage[]> {
  const out: SseMessage[] = [];
  for await (const message of parseSse(streamOf(chunks))) out.push(message);
  return out;
}

describe('parseSse', () => {
  it('reads id, event and data, skipping comments', async () => {
    expect(await collect([': hello\n\n', 'id: 1\nevent: run-started\ndata: {"seq":1}\n\n'])).toEqual([
      { id: '1', event: 'run-started', data: '{"seq":1}' },
    ]);
  });

  it('joins an event split across chunks at any byte, and CRLF line ends', async () => {
    const text = 'id: 7\r\nevent: tool-result\r\ndata: {"a":"é"}\r\n\r\n';
    const bytes = new TextEncoder().encode(text);
    const chunks: ReadableStream<Uint8Array> = new ReadableStream({
      start(controller) {
        for (const byte of bytes) controller.enqueue(new Uint8Array([byte]));
        controller.close();
      },
    });
    const out: SseMessage[] = [];
    for await (const message of parseSse(chunks)) out.push(message);
    expect(out).toEqual([{ id: '7', event: 'tool-result', data: '{"a":"é"}' }]);
  });

  it('joins several data lines with a newline, defaults the event to message, and keeps the last id', async () => {
    expect(await collect(['id: 3\ndata: a\ndata: b\n\n', 'data:c\n\n'])).toEqual([
      { id: '3', event: 'message', data: 'a\nb' },
      { id: '3', event: 'message', data: 'c' },
    ]);
  });

  it('drops an event the stream ended in the middle of', async () => {
    expect(await collect(['id: 1\ndata: whole\n\n', 'id: 2\ndata: cut'])).toEqual([
      { id: '1', event: 'message', data: 'whole' },
    ]);
  });
});
