import { createReadStream, statSync } from 'node:fs';
import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';

/** The two bytes every gzip member starts with (RFC 1952). */
const GZIP_MAGIC = [0x1f, 0x8b];

export interface LogInput {
  /** The log's text: decompressed when it is gzip, whatever its name says. */
  text: Readable;
  /** Bytes read so far of the file as stored (compressed bytes for a .gz), for a progress line. */
  bytesRead: () => number;
  /** The stored size, when known (a file; not a pipe). */
  size?: number;
}

/**
 * Opens one input of `ingest-logs`: a file, or `stream` for '-'. Rotated logs are usually
 * gzipped, and not always named .gz (logrotate's `compressext`, a copy renamed by hand), so gzip
 * is recognised by its first bytes. Concatenated gzip members (appended by some rotations) are
 * read one after the other.
 */
export async function openLogInput(path: string, stdin: Readable): Promise<LogInput> {
  const raw = path === '-' ? stdin : createReadStream(path);
  let bytes = 0;
  const chunks = raw[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  const next = async (): Promise<Buffer | null> => {
    const n = await chunks.next();
    if (n.done) return null;
    const chunk = typeof n.value === 'string' ? Buffer.from(n.value) : n.value;
    bytes += chunk.length;
    return chunk;
  };
  // Enough of the start to see the magic bytes (a pipe may deliver a single byte first).
  let head = Buffer.alloc(0);
  let ended = false;
  while (head.length < GZIP_MAGIC.length && !ended) {
    const chunk = await next();
    if (chunk === null) ended = true;
    else head = Buffer.concat([head, chunk]);
  }
  const whole = Readable.from(
    (async function* () {
      if (head.length > 0) yield head;
      if (ended) return;
      for (let chunk = await next(); chunk !== null; chunk = await next()) yield chunk;
    })(),
  );
  const gzipped = GZIP_MAGIC.every((b, i) => head[i] === b);
  // pipeline: an error on either side (an unreadable file, a corrupt member) reaches the reader.
  const text = gzipped ? pipeline(whole, createGunzip(), () => undefined) : whole;
  const size = path === '-' ? undefined : statSync(path, { throwIfNoEntry: false })?.size;
  return { text, bytesRead: () => bytes, size };
}
