import { parseRing, readRingFile, RingError, type RingWithAssignments } from '../src';
import { readBuilderDump } from './helpers/builder-dump';
import { fixturePath, fixtureRing, gzip, joinPayload, payloadOf, splitPayload } from './helpers/ring-bytes';

/** Rings written by swift-ring-builder (test/fixtures/make-rings.sh), checked against what it printed. */

const SWIFT_DIR_RINGS = ['object', 'object-1', 'object-2', 'account', 'container'];

function partitionsPerDevice(ring: RingWithAssignments): Map<number, number> {
  const counts = new Map<number, number>();
  for (const row of ring.assignments) for (const id of row) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

describe('parseRing on rings written by swift-ring-builder', () => {
  it.each(SWIFT_DIR_RINGS)('when %s.ring.gz is parsed, then part power and devices match the builder', (name) => {
    const dump = readBuilderDump(name);
    const ring = parseRing(fixtureRing('swift', `${name}.ring.gz`), `${name}.ring.gz`);
    expect(2 ** ring.partPower).toBe(dump.partitions);
    expect(ring.replicaCount).toBe(Math.ceil(dump.replicas));
    expect(ring.byteorder).toBe('little');
    expect(ring.devices).toEqual(
      dump.devices.map((d) => ({
        id: d.id,
        region: d.region,
        zone: d.zone,
        ip: d.ip,
        port: d.port,
        replicationIp: d.replicationIp,
        replicationPort: d.replicationPort,
        device: d.device,
        weight: Number(d.weight),
        meta: d.meta,
      })),
    );
    expect('assignments' in ring).toBe(false);
  });

  it.each(SWIFT_DIR_RINGS)(
    'when %s.ring.gz is parsed with assignments, then each device holds as many partitions as the builder says',
    (name) => {
      const dump = readBuilderDump(name);
      const ring = parseRing(fixtureRing('swift', `${name}.ring.gz`), `${name}.ring.gz`, { withAssignments: true });
      expect(ring.replicas).toBeCloseTo(dump.replicas, 6);
      expect(Object.fromEntries(partitionsPerDevice(ring))).toEqual(
        Object.fromEntries(dump.devices.map((d) => [d.id, d.partitions])),
      );
    },
  );

  it('when the policy 0 ring is parsed, then it has the header values the builder wrote', () => {
    const ring = parseRing(fixtureRing('swift', 'object.ring.gz'), 'object.ring.gz');
    expect(ring).toEqual({
      partPower: 8,
      replicaCount: 3,
      byteorder: 'little',
      version: 4,
      devices: ['sdb1', 'sdb2', 'sdb3'].map((device, id) => ({
        id,
        region: 1,
        zone: id + 1,
        ip: '127.0.0.1',
        port: 6200,
        replicationIp: '127.0.0.1',
        replicationPort: 6200,
        device,
        weight: 100,
        meta: '',
      })),
    });
  });

  it('when a ring has 3 replicas, then there are 3 rows of 2^partPower entries and every partition has 3 distinct devices', () => {
    const ring = parseRing(fixtureRing('swift', 'object-1.ring.gz'), 'object-1.ring.gz', { withAssignments: true });
    expect(ring.assignments).toHaveLength(3);
    for (const row of ring.assignments) expect(row).toHaveLength(256);
    for (let part = 0; part < 256; part++) {
      expect(new Set(ring.assignments.map((row) => row[part])).size).toBe(3);
    }
    expect(ring.replicas).toBe(3);
  });

  describe('when the ring has 2.5 replicas, part power 10 and a removed device', () => {
    const ring = parseRing(fixtureRing('swift', 'object-2.ring.gz'), 'object-2.ring.gz', { withAssignments: true });

    it('then the removed device (id 1) is skipped and the others keep their ids', () => {
      expect(ring.devices.map((d) => d.id)).toEqual([0, 2, 3]);
    });

    it('then there are 2 full rows of 1024 entries and a last row of 512', () => {
      expect(ring.partPower).toBe(10);
      expect(ring.replicaCount).toBe(3);
      expect(ring.assignments.map((row) => row.length)).toEqual([1024, 1024, 512]);
      expect(ring.replicas).toBe(2.5);
    });

    it('then every assigned id is one of the ring devices', () => {
      const ids = new Set(ring.devices.map((d) => d.id));
      for (const row of ring.assignments) for (const id of row) expect(ids.has(id)).toBe(true);
    });

    it('then regions, the replication network and meta come through', () => {
      expect(ring.devices[0]).toEqual({
        id: 0,
        region: 1,
        zone: 1,
        ip: '10.0.0.1',
        port: 6200,
        replicationIp: '10.1.0.1',
        replicationPort: 6300,
        device: 'sdc1',
        weight: 100,
        meta: 'ssd',
      });
      expect(ring.devices.map((d) => d.region)).toEqual([1, 2, 2]);
    });
  });

  it('when a partition power increase is prepared, then nextPartPower is reported', () => {
    const ring = parseRing(fixtureRing('rings', 'object-next-part-power.ring.gz'), 'object-next-part-power.ring.gz');
    expect(ring.partPower).toBe(8);
    expect(ring.nextPartPower).toBe(9);
  });

  it('when devices predate regions and replication networks, then region is 1 and replication ip/port are ip/port', () => {
    const ring = parseRing(fixtureRing('rings', 'object-noregion.ring.gz'), 'object-noregion.ring.gz', {
      withAssignments: true,
    });
    const current = parseRing(fixtureRing('swift', 'object.ring.gz'), 'object.ring.gz', { withAssignments: true });
    expect(ring.devices).toEqual(current.devices);
    expect(ring.assignments).toEqual(current.assignments);
  });

  it('when the ring is an old pickled one, then it is refused as such', () => {
    expect(() => parseRing(fixtureRing('rings', 'object-pickled.ring.gz'), 'object-pickled.ring.gz')).toThrow(
      new RingError(
        'object-pickled.ring.gz',
        'old-style pickled ring (pickle protocol 2), not supported: rewrite it with `swift-ring-builder <builder> write_ring`',
      ),
    );
  });

  it('when the rows are big-endian, then the assignments read the same as the little-endian original', () => {
    const original = parseRing(fixtureRing('swift', 'object-2.ring.gz'), 'object-2.ring.gz', { withAssignments: true });
    const { header, rows } = splitPayload(payloadOf(fixtureRing('swift', 'object-2.ring.gz')));
    const swapped = Buffer.from(rows).swap16();
    const big = parseRing(
      gzip(joinPayload({ header: { ...header, byteorder: 'big' }, rows: swapped })),
      'big.ring.gz',
      { withAssignments: true },
    );
    expect(big.byteorder).toBe('big');
    expect(big.assignments).toEqual(original.assignments);
  });

  it('when the JSON header has an odd length, then the rows (at an odd offset) still read correctly', () => {
    const { header, rows } = splitPayload(payloadOf(fixtureRing('swift', 'object.ring.gz')));
    const json = `${JSON.stringify(header)} `;
    const shifted = json.length % 2 === 1 ? json : `${json} `;
    const ring = parseRing(gzip(joinPayload({ header: shifted, rows })), 'odd.ring.gz', { withAssignments: true });
    const original = parseRing(fixtureRing('swift', 'object.ring.gz'), 'object.ring.gz', { withAssignments: true });
    expect(ring.assignments).toEqual(original.assignments);
  });

  it('when a ring has no devices and no rows (never rebalanced), then it parses to empty lists', () => {
    const ring = parseRing(
      gzip(joinPayload({ header: { byteorder: 'little', devs: [], part_shift: 24, replica_count: 0 } })),
      'empty.ring.gz',
      {
        withAssignments: true,
      },
    );
    expect(ring).toMatchObject({ devices: [], partPower: 8, replicaCount: 0, assignments: [], replicas: 0 });
  });
});

describe('readRingFile', () => {
  it('when the file exists, then it is parsed under its base name', async () => {
    const ring = await readRingFile(fixturePath('swift', 'object-1.ring.gz'));
    expect(ring.devices.map((d) => d.device)).toEqual(['sdb2', 'sdb3', 'sdb4']);
  });

  it('when the file is missing, then a RingError names it', async () => {
    const error = await readRingFile(fixturePath('swift', 'object-9.ring.gz')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RingError);
    expect((error as RingError).file).toBe('object-9.ring.gz');
    expect((error as RingError).message).toMatch(/^object-9\.ring\.gz: cannot read .*\(ENOENT\)$/);
  });

  it('when the file is corrupt, then the RingError carries the base name', async () => {
    const error = await readRingFile(fixturePath('swift', 'swift.conf')).catch((e: unknown) => e);
    expect(error).toEqual(new RingError('swift.conf', 'not gzip data'));
  });
});
