import { withUsage, type MovedDevice } from '../src/usage';

const dev = (id: number, parts: number, partsAfter: number, out: number, into: number): MovedDevice => ({
  id,
  region: 1,
  zone: 1,
  ip: '10.0.0.1',
  port: 6200,
  device: `sd${id}`,
  weight: 100,
  weight_after: 100,
  parts,
  parts_after: partsAfter,
  moved_out: out,
  moved_in: into,
});

describe('device usage in a plan', () => {
  // d0 gives 10 of its 100 replicas (1,000 bytes each) to the new d1.
  const devices = [dev(0, 100, 90, 10, 0), dev(1, 0, 10, 0, 10)];

  it('when recon gave every device, then bytes_to_move and the projections follow the moved replicas', () => {
    const usage = new Map([
      ['10.0.0.1:6200/sd0', { used: 100_000, size: 200_000 }],
      ['10.0.0.1:6200/sd1', { used: 0, size: 200_000 }],
    ]);
    const r = withUsage(devices, usage);
    expect(r.bytesToMove).toBe(10_000);
    expect(r.devices.map((d) => [d.used_bytes, d.projected_used_bytes, d.projected_used_pct])).toEqual([
      [100_000, 90_000, 45],
      [0, 10_000, 5],
    ]);
    expect(r.notes).toEqual([]);
  });

  it('when a device that gives replicas away has no usage, then bytes_to_move is null and a note says why', () => {
    const r = withUsage(devices, new Map([['10.0.0.1:6200/sd1', { used: 0, size: 200_000 }]]));
    expect(r.bytesToMove).toBeNull();
    expect(r.notes[0]).toMatch(/No usage for 1 device\(s\) that give partitions away \(10\.0\.0\.1:6200\/sd0\)/);
  });

  it('when no usage was given, then every byte field is null and a note says so', () => {
    const r = withUsage(devices, undefined);
    expect(r.bytesToMove).toBeNull();
    expect(r.devices.every((d) => d.used_bytes === null && d.projected_used_pct === null)).toBe(true);
    expect(r.notes[0]).toMatch(/No device usage was given/);
  });
});
