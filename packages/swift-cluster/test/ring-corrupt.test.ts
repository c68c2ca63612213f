import { parseRing, RingError } from '../src';
import { fixtureRing, gzip, joinPayload, payloadOf, splitPayload } from './helpers/ring-bytes';

/**
 * Damaged variants of a real ring (object-2.ring.gz: 2.5 replicas, a hole): each is a RingError naming file and reason.
 */

const FILE = 'object-2.ring.gz';
const good = fixtureRing('swift', FILE);
const payload = payloadOf(good);
const { header, rows } = splitPayload(payload);
const jsonLength = payload.readUInt32BE(6);

function failure(data: Buffer, options: { withAssignments?: boolean; maxDecompressedBytes?: number } = {}): RingError {
  try {
    parseRing(data, FILE, options);
  } catch (e) {
    if (e instanceof RingError) return e;
    throw e;
  }
  throw new Error('parseRing accepted the data');
}

function expectFailure(data: Buffer, reason: string | RegExp, options: { withAssignments?: boolean } = {}): void {
  const error = failure(data, options);
  expect(error.file).toBe(FILE);
  if (typeof reason === 'string') expect(error.reason).toBe(reason);
  else expect(error.reason).toMatch(reason);
  expect(error.message).toBe(`${FILE}: ${error.reason}`);
}

const withHeader = (changes: Record<string, unknown>): Buffer =>
  gzip(joinPayload({ header: { ...header, ...changes }, rows }));

describe('parseRing on damaged files', () => {
  it('when the file is not gzip, then the reason is "not gzip data"', () => {
    expectFailure(payload, 'not gzip data');
    expectFailure(Buffer.from('R1NG'), 'not gzip data');
  });

  it('when the file is empty, then it says so', () => {
    expectFailure(Buffer.alloc(0), 'empty file (not gzip data)');
  });

  it.each([good.length - 1, good.length - 8, Math.floor(good.length / 2), 12])(
    'when the gzip data is cut to %i bytes, then it is reported truncated',
    (length) => {
      expectFailure(good.subarray(0, length), 'truncated gzip data (unexpected end of file)');
    },
  );

  it('when the gzip checksum does not match, then the gzip data is reported corrupt', () => {
    const damaged = Buffer.from(good);
    damaged.writeUInt8(damaged.readUInt8(damaged.length - 8) ^ 0xff, damaged.length - 8); // CRC32 in the trailer
    expectFailure(damaged, 'corrupt gzip data (incorrect data check)');
  });

  it('when the payload decompresses to more than the limit, then it is refused', () => {
    const error = failure(good, { maxDecompressedBytes: 1000 });
    expect(error.reason).toBe('decompressed size exceeds the limit of 1000 bytes');
  });

  it.each([
    [0, /^truncated header \(0 bytes, no room for the 4-byte magic\)$/],
    [3, /^truncated header \(3 bytes, no room for the 4-byte magic\)$/],
    [4, /^truncated header \(no format version\)$/],
    [5, /^truncated header \(no format version\)$/],
    [6, /^truncated header \(no JSON header length\)$/],
    [9, /^truncated header \(no JSON header length\)$/],
    [10, new RegExp(`^truncated header \\(JSON header of ${jsonLength} bytes, only 0 present\\)$`)],
    [11, new RegExp(`^truncated header \\(JSON header of ${jsonLength} bytes, only 1 present\\)$`)],
    [
      10 + jsonLength - 1,
      new RegExp(`^truncated header \\(JSON header of ${jsonLength} bytes, only ${jsonLength - 1} present\\)$`),
    ],
  ])('when the payload is cut at %i bytes, then the header is reported truncated', (cut, reason) => {
    expectFailure(gzip(payload.subarray(0, cut)), reason);
  });

  it('when the payload is cut right after the JSON header, then the header parses but the assignments are truncated', () => {
    const cut = gzip(payload.subarray(0, 10 + jsonLength));
    expect(parseRing(cut, FILE).devices).toHaveLength(3);
    expectFailure(cut, 'assignments truncated: replica_count 3 with 1024 partitions needs 4098..6144 bytes, found 0', {
      withAssignments: true,
    });
  });

  it.each([
    [
      'the short last row is missing',
      512 * 2,
      /^assignments truncated: replica_count 3 with 1024 partitions needs 4098\.\.6144 bytes, found 4096$/,
    ],
    [
      "a full row's worth is missing",
      1024 * 2,
      /^assignments truncated: replica_count 3 with 1024 partitions needs 4098\.\.6144 bytes, found 3072$/,
    ],
    ['a byte is missing', 1, /^assignments truncated: 5119 bytes ends inside a 16-bit device id$/],
  ])('when %s from the assignments, then they are reported truncated', (_what, missing, reason) => {
    expectFailure(gzip(payload.subarray(0, payload.length - missing)), reason, { withAssignments: true });
  });

  it('when the assignments hold more than replica_count rows, then the extra bytes are reported', () => {
    const extra = gzip(joinPayload({ header, rows: Buffer.concat([rows, Buffer.alloc(2048 * 2)]) }));
    expectFailure(extra, '3072 unexpected bytes after the last assignment row (expected at most 6144)', {
      withAssignments: true,
    });
  });

  it('when an assignment refers to the removed device, then the row and partition are named', () => {
    const damaged = Buffer.from(rows);
    damaged.writeUInt16LE(1, 2 * (1024 + 7)); // row 1, partition 7 -> device id 1 (the hole)
    expectFailure(
      gzip(joinPayload({ header, rows: damaged })),
      'assignment row 1, partition 7 refers to device id 1, a removed device (a hole in devs)',
      {
        withAssignments: true,
      },
    );
  });

  it('when an assignment refers to a device id past the device list, then it is reported', () => {
    const damaged = Buffer.from(rows);
    damaged.writeUInt16LE(0xffff, 2 * (2048 + 511)); // last entry of the short last row
    expectFailure(
      gzip(joinPayload({ header, rows: damaged })),
      'assignment row 2, partition 511 refers to device id 65535, beyond devs (4 entries)',
      {
        withAssignments: true,
      },
    );
  });

  it('when the magic is wrong, then it is quoted', () => {
    expectFailure(gzip(joinPayload({ magic: 'XXXX', header, rows })), "not a ring file (magic 'XXXX')");
    expectFailure(
      gzip(Buffer.concat([Buffer.from([0, 1, 0x27, 0xff]), payload.subarray(4)])),
      "not a ring file (magic '\\x00\\x01\\x27\\xff')",
    );
  });

  it('when the format version is 2 (or 0), then it is unsupported', () => {
    expectFailure(gzip(joinPayload({ version: 2, header, rows })), 'unsupported ring format version 2');
    expectFailure(gzip(joinPayload({ version: 0, header, rows })), 'unsupported ring format version 0');
  });

  it.each([
    ['not JSON at all', 'this is not json'],
    ['cut short', JSON.stringify(header).slice(0, -1)],
    ['has a trailing comma', '{"devs": [],}'],
  ])('when the JSON header is %s, then it is not valid JSON', (_what, json) => {
    expectFailure(gzip(joinPayload({ header: json, rows })), /^header is not valid JSON \(.+\)$/);
  });

  it('when the JSON header is not UTF-8, then it is not valid JSON', () => {
    const json = Buffer.from(JSON.stringify(header).replace('sdc1', 'sd\u00ff1'), 'latin1');
    expectFailure(gzip(joinPayload({ header: json.toString('latin1'), rows })), /^header is not valid JSON \(.*\)$/);
  });

  it.each([
    ['a list', []],
    ['a number', 3],
  ])('when the JSON header is %s, then it is not an object', (_what, value) => {
    expectFailure(
      gzip(joinPayload({ header: JSON.stringify(value), rows })),
      /^invalid header: expected a JSON object/,
    );
  });

  it.each([
    [{ byteorder: 'middle' }, `invalid header: 'byteorder' must be "little" or "big" (got "middle")`],
    [{ byteorder: undefined }, `invalid header: 'byteorder' must be "little" or "big" (got nothing)`],
    [{ part_shift: 33 }, "invalid header: 'part_shift' must be an integer 0..32 (got 33)"],
    [{ part_shift: 22.5 }, "invalid header: 'part_shift' must be an integer 0..32 (got 22.5)"],
    [{ replica_count: 2.5 }, "invalid header: 'replica_count' must be an integer 0..65535 (got 2.5)"],
    [{ replica_count: '3' }, `invalid header: 'replica_count' must be an integer 0..65535 (got "3")`],
    [{ devs: {} }, "invalid header: 'devs' must be a list (got {})"],
    [{ version: 'four' }, `invalid header: 'version' must be an integer 0..9007199254740991 (got "four")`],
  ])('when the header has %j, then the field is named', (changes, reason) => {
    expectFailure(withHeader(changes), reason);
  });

  const devs = header['devs'] as (Record<string, unknown> | null)[];
  const withDev0 = (changes: Record<string, unknown>): Buffer =>
    withHeader({ devs: [{ ...devs[0], ...changes }, ...devs.slice(1)] });

  it.each([
    [{ id: 5 }, "invalid header: devs[0] has id 5; a device's id must be its index in devs"],
    [{ port: '6200' }, `invalid header: devs[0]: 'port' must be an integer 0..65535 (got "6200")`],
    [{ port: 70000 }, "invalid header: devs[0]: 'port' must be an integer 0..65535 (got 70000)"],
    [{ ip: '' }, `invalid header: devs[0]: 'ip' must be a non-empty string (got "")`],
    [{ device: undefined }, "invalid header: devs[0]: 'device' must be a non-empty string (got nothing)"],
    [{ zone: -1 }, "invalid header: devs[0]: 'zone' must be an integer 0..9007199254740991 (got -1)"],
    [{ weight: 'heavy' }, `invalid header: devs[0]: 'weight' must be a non-negative number (got "heavy")`],
    [{ meta: 7 }, "invalid header: devs[0]: 'meta' must be a string (got 7)"],
    [{ replication_port: null }, "invalid header: devs[0]: 'replication_port' must be an integer 0..65535 (got null)"],
  ])('when device 0 has %j, then the device and field are named', (changes, reason) => {
    expectFailure(withDev0(changes), reason);
  });

  it('when a device entry is neither an object nor null, then it is named', () => {
    expectFailure(
      withHeader({ devs: [devs[0], 'sdb2', ...devs.slice(2)] }),
      'invalid header: devs[1] must be an object or null (got "sdb2")',
    );
  });
});
