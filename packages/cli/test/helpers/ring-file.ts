import { writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

/**
 * Writes a ring file the way Swift's RingData.serialize_v1 lays it out (magic, version, JSON header,
 * replica2part2dev rows), for tests that need more devices than swift-ring-builder builds in seconds.
 * Partitions are dealt round-robin; no balance is claimed.
 */
export function writeRing(
  path: string,
  devices: Array<{ ip: string; port: number; device: string }>,
  partPower = 8,
): void {
  writeFileSync(path, ringBytes(devices, partPower));
}

/** The bytes of such a ring file; a device may give its region and zone (else region 1, zones 1 to 4 in turn). */
export function ringBytes(
  devices: Array<{ ip: string; port: number; device: string; region?: number; zone?: number }>,
  partPower = 8,
): Buffer {
  const replicas = 3;
  const header = {
    devs: devices.map((d, id) => ({ id, region: 1, zone: 1 + (id % 4), weight: 100, meta: '', ...d })),
    part_shift: 32 - partPower,
    replica_count: replicas,
    byteorder: 'little',
  };
  const json = Buffer.from(JSON.stringify(header), 'latin1');
  const prefix = Buffer.alloc(10);
  prefix.write('R1NG', 0, 'latin1');
  prefix.writeUInt16BE(1, 4);
  prefix.writeUInt32BE(json.length, 6);
  const parts = 2 ** partPower;
  const rows = Buffer.alloc(replicas * parts * 2);
  for (let r = 0; r < replicas; r++)
    for (let p = 0; p < parts; p++) rows.writeUInt16LE((p * replicas + r) % devices.length, (r * parts + p) * 2);
  return gzipSync(Buffer.concat([prefix, json, rows]));
}
