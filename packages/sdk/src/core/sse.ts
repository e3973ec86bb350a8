/** One Server-Sent Event as it came off the wire. */
export interface SseMessage {
  /** The `id:` field, or the last one seen (the stream's last event id). */
  id: string | undefined;
  /** The `event:` field; `message` when absent. */
  event: string;
  /** The `data:` lines, joined with `\n`. */
  data: string;
}

/**
 * Parses a `text/event-stream` body (the WHATWG rules: `field: value` lines, `:` comments, a blank line
 * ends an event, CRLF, CR or LF line ends) into messages. `onActivity` is called for every chunk read,
 * keep-alive comments included, so a caller can tell a silent connection from a dead one.
 */
export async function* parseSse(
  body: ReadableStream<Uint8Array>,
  onActivity: () => void = () => {},
): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  let lastId: string | undefined;
  let event = '';
  let data: string[] = [];
  let sawData = false;
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      onActivity();
      buffer += decoder.decode(value, { stream: true });
      for (;;) {
        const end = buffer.search(/\r\n|\n|\r/);
        // A lone CR at the very end may be the first half of a CRLF: wait for the next chunk.
        if (end === -1 || (buffer[end] === '\r' && end === buffer.length - 1)) break;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
        if (line === '') {
          if (sawData) yield { id: lastId, event: event || 'message', data: data.join('\n') };
          event = '';
          data = [];
          sawData = false;
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'data') {
          data.push(value);
          sawData = true;
        } else if (field === 'event') event = value;
        else if (field === 'id' && !value.includes('\0')) lastId = value;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
