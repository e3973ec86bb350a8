import { pipeline, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { gatewayErrors } from '../errors.js';

/** A body read up to the limit, as UTF-8 text. */
export interface ReadBody {
  text: string;
  /** Set when the body was cut; `size` is the full decoded size when the server declared it. */
  truncated?: { limit: number; size?: number };
}

function decoderFor(encoding: string): NodeJS.ReadWriteStream | undefined {
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    case 'identity':
    case '':
      return undefined;
    default:
      throw new Error(`unsupported content-encoding ${encoding}`);
  }
}

/**
 * Step 9: reads at most `limit` decoded bytes of `body`. Decompression is pulled chunk by chunk (zlib honours
 * backpressure), so a decompression bomb costs at most the limit plus one chunk before it is abandoned.
 */
export async function readBody(
  body: Readable,
  contentEncoding: string | undefined,
  contentLength: number | undefined,
  limit: number,
  toolName: string,
): Promise<ReadBody> {
  let source: AsyncIterable<Buffer> = body;
  const encodings = (contentEncoding ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== '' && e !== 'identity')
    .reverse();
  if (encodings.length > 0) {
    let decoders: NodeJS.ReadWriteStream[];
    try {
      decoders = encodings.map((e) => decoderFor(e)).filter((d) => d !== undefined);
    } catch (error) {
      body.destroy();
      throw gatewayErrors.create('api:gateway:response-undecodable', {
        tool: toolName,
        encoding: contentEncoding,
        reason: (error as Error).message,
      });
    }
    source = pipeline(
      [body, ...decoders] as unknown as [Readable, NodeJS.ReadWriteStream],
      () => {},
    ) as unknown as Readable;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of source) {
      if (size + chunk.length > limit) {
        chunks.push(chunk.subarray(0, limit - size));
        size = limit;
        // Leaving the loop destroys the stream (and the pipeline behind it): nothing more is read or decoded.
        const known = encodings.length === 0 ? contentLength : undefined;
        return {
          text: Buffer.concat(chunks, size).toString('utf8'),
          truncated: { limit, ...(known === undefined ? {} : { size: known }) },
        };
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } catch (error) {
    if (encodings.length > 0 && isDecodeError(error)) {
      throw gatewayErrors.create('api:gateway:response-undecodable', {
        tool: toolName,
        encoding: contentEncoding,
        reason: (error as Error).message,
      });
    }
    throw error;
  }
  return { text: (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)).toString('utf8') };
}

function isDecodeError(error: unknown): boolean {
  const { code, errno } = error as { code?: unknown; errno?: unknown };
  return typeof errno === 'number' && typeof code === 'string' && (code.startsWith('Z_') || code.startsWith('ERR_'));
}
