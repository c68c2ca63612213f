import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';

/** Byte-level access to the fixture rings, to derive corrupt or re-encoded variants of real files. */

export const fixturePath = (...parts: string[]): string => join(__dirname, '..', 'fixtures', ...parts);

export const fixtureRing = (...parts: string[]): Buffer => readFileSync(fixturePath(...parts));

export const payloadOf = (gz: Buffer): Buffer => gunzipSync(gz);

export const gzip = (payload: Buffer): Buffer => gzipSync(payload);

export interface RingParts {
  version: number;
  header: Record<string, unknown>;
  rows: Buffer;
}

export function splitPayload(payload: Buffer): RingParts {
  const jsonLength = payload.readUInt32BE(6);
  return {
    version: payload.readUInt16BE(4),
    header: JSON.parse(payload.subarray(10, 10 + jsonLength).toString('ascii')) as Record<string, unknown>,
    rows: payload.subarray(10 + jsonLength),
  };
}

/** magic + version + JSON length + JSON + rows, as Swift's serialize_v1 writes them. */
export function joinPayload(parts: { version?: number; header: unknown; rows?: Buffer; magic?: string }): Buffer {
  const json = Buffer.from(typeof parts.header === 'string' ? parts.header : JSON.stringify(parts.header), 'latin1');
  const prefix = Buffer.alloc(10);
  prefix.write(parts.magic ?? 'R1NG', 0, 'latin1');
  prefix.writeUInt16BE(parts.version ?? 1, 4);
  prefix.writeUInt32BE(json.length, 6);
  return Buffer.concat([prefix, json, parts.rows ?? Buffer.alloc(0)]);
}
