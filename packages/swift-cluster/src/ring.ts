import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { RingError } from './errors';
import { boundedGunzip, DEFAULT_MAX_DECOMPRESSED_BYTES } from './gunzip';
import { readAssignments } from './ring-assignments';
import { RingProblem, parseHeader } from './ring-header';
import type { ParseRingOptions, Ring, RingWithAssignments } from './ring-types';

/**
 * Swift ring files (`account.ring.gz`, `object-1.ring.gz`, …), format version 1: a gzip'd payload of
 * magic `R1NG`, a big-endian u16 format version, a big-endian u32 JSON length, the JSON header
 * (devices, part_shift, replica_count, byteorder) and the partition assignment rows.
 * Anything that is not exactly that is a `RingError` naming the file and the reason.
 */

const MAGIC = 'R1NG';
const HEADER_START = 10;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function failRing(file: string, reason: string): never {
  throw new RingError(file, reason);
}

function describeMagic(bytes: Buffer): string {
  return [...bytes]
    .map((b) =>
      b >= 0x20 && b < 0x7f && b !== 0x27 && b !== 0x5c
        ? String.fromCharCode(b)
        : `\\x${b.toString(16).padStart(2, '0')}`,
    )
    .join('');
}

export function parseRing(
  buffer: Buffer,
  fileName: string,
  options: ParseRingOptions & { withAssignments: true },
): RingWithAssignments;
export function parseRing(buffer: Buffer, fileName: string, options?: ParseRingOptions): Ring;
export function parseRing(
  buffer: Buffer,
  fileName: string,
  options: ParseRingOptions = {},
): Ring | RingWithAssignments {
  const fail = (reason: string): never => failRing(fileName, reason);
  const gunzipped = boundedGunzip(buffer, options.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES);
  if ('reason' in gunzipped) return fail(gunzipped.reason);
  const payload = gunzipped.payload;

  if (payload.length < 4) fail(`truncated header (${payload.length} bytes, no room for the 4-byte magic)`);
  const magic = payload.subarray(0, 4);
  if (magic.toString('latin1') !== MAGIC) {
    if (magic[0] === 0x80) {
      fail(
        `old-style pickled ring (pickle protocol ${magic[1]}), not supported: rewrite it with \`swift-ring-builder <builder> write_ring\``,
      );
    }
    fail(`not a ring file (magic '${describeMagic(magic)}')`);
  }
  if (payload.length < 6) fail('truncated header (no format version)');
  const version = payload.readUInt16BE(4);
  if (version !== 1) fail(`unsupported ring format version ${version}`);
  if (payload.length < HEADER_START) fail('truncated header (no JSON header length)');
  const jsonLength = payload.readUInt32BE(6);
  const jsonEnd = HEADER_START + jsonLength;
  if (payload.length < jsonEnd) {
    fail(`truncated header (JSON header of ${jsonLength} bytes, only ${payload.length - HEADER_START} present)`);
  }

  let header: unknown;
  try {
    header = JSON.parse(strictUtf8.decode(payload.subarray(HEADER_START, jsonEnd)));
  } catch (e) {
    fail(`header is not valid JSON (${(e as Error).message})`);
  }
  try {
    const { ring, slots } = parseHeader(header);
    if (!options.withAssignments) return ring;
    const { rows, replicas } = readAssignments(payload.subarray(jsonEnd), ring, slots);
    return { ...ring, assignments: rows, replicas };
  } catch (e) {
    if (e instanceof RingProblem) fail(e.message);
    throw e;
  }
}

/** Reads a ring file and parses it under its base name (`object-1.ring.gz`). */
export async function readRingFile(
  path: string,
  options: ParseRingOptions & { withAssignments: true },
): Promise<RingWithAssignments>;
export async function readRingFile(path: string, options?: ParseRingOptions): Promise<Ring>;
export async function readRingFile(path: string, options: ParseRingOptions = {}): Promise<Ring> {
  const name = basename(path);
  let data: Buffer;
  try {
    data = await readFile(path);
  } catch (e) {
    throw new RingError(name, `cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return parseRing(data, name, options);
}
