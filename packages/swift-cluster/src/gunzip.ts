import { gunzipSync } from 'node:zlib';

/** Decompressed payloads larger than this are refused unless the caller sets another limit. */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 512 * 1024 * 1024;

/**
 * Gunzips `data`, refusing more than `maxBytes` of output. Returns the payload or the reason it cannot
 * be had (never a partial payload): a ring parser reports the reason against the file name.
 */
export function boundedGunzip(data: Buffer, maxBytes: number): { payload: Buffer } | { reason: string } {
  if (data.length === 0) return { reason: 'empty file (not gzip data)' };
  if (data.length < 2 || data[0] !== 0x1f || data[1] !== 0x8b) return { reason: 'not gzip data' };
  try {
    return { payload: gunzipSync(data, { maxOutputLength: maxBytes }) };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ERR_BUFFER_TOO_LARGE') return { reason: `decompressed size exceeds the limit of ${maxBytes} bytes` };
    if (code === 'Z_BUF_ERROR') return { reason: 'truncated gzip data (unexpected end of file)' };
    return { reason: `corrupt gzip data (${(e as Error).message})` };
  }
}
