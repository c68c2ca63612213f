import {
  ReconError,
  type NodeDiskUsage,
  type Ring,
  type RingDevice,
  type StoragePolicy,
  type SwiftDir,
} from '@cairn/swift-cluster';
import { buildDeviceReport, storageNodes } from '../src/capacity/report';

const dev = (id: number, ip: string, port: number, device: string): RingDevice => ({
  id,
  region: 1,
  zone: 1,
  ip,
  port,
  replicationIp: ip,
  replicationPort: port,
  device,
  weight: 100,
  meta: '',
});
const ring = (devices: RingDevice[]): Ring => ({ devices, partPower: 8, replicaCount: 3, byteorder: 'little' });
const policy = (index: number, name: string, isDefault = false): StoragePolicy => ({
  index,
  name,
  aliases: [],
  isDefault,
  isDeprecated: false,
  policyType: 'replication',
  diskfileModule: 'egg:swift#replication.fs',
});

// gold = a/sdb1, a/sdb2, b/sdb3; silver = a/sdb2, b/sdb3, c/sdb4 (ring-local ids differ on purpose).
const swift: SwiftDir = {
  policies: [policy(0, 'gold', true), policy(1, 'silver')],
  rings: new Map([
    [0, ring([dev(0, '10.0.0.1', 6200, 'sdb1'), dev(1, '10.0.0.1', 6200, 'sdb2'), dev(2, '10.0.0.2', 6200, 'sdb3')])],
    [1, ring([dev(0, '10.0.0.1', 6200, 'sdb2'), dev(1, '10.0.0.2', 6200, 'sdb3'), dev(2, '10.0.0.3', 6200, 'sdb4')])],
  ]),
};
const usage = (device: string, size: number, avail: number) => ({
  device,
  mounted: true,
  size,
  used: size - avail,
  avail,
});

describe('buildDeviceReport', () => {
  it('when every node answers, then each device carries all its policies and recon usage (used = size − avail)', () => {
    const polled: NodeDiskUsage[] = [
      { node: { ip: '10.0.0.1', port: 6200 }, ok: true, devices: [usage('sdb1', 1000, 600), usage('sdb2', 1000, 250)] },
      { node: { ip: '10.0.0.2', port: 6200 }, ok: true, devices: [usage('sdb3', 2000, 500)] },
      { node: { ip: '10.0.0.3', port: 6200 }, ok: true, devices: [usage('sdb4', 500, 500)] },
    ];
    const report = buildDeviceReport(swift, polled);
    expect(report.warnings).toEqual([]);
    expect(report.reported).toBe(4);
    expect(report.body.policies).toEqual([
      { index: 0, name: 'gold', default: true },
      { index: 1, name: 'silver', default: false },
    ]);
    expect(report.body.devices).toEqual([
      {
        node: '10.0.0.1:6200',
        device: 'sdb1',
        policies: ['gold'],
        size_bytes: 1000,
        used_bytes: 400,
        avail_bytes: 600,
        mounted: true,
      },
      {
        node: '10.0.0.1:6200',
        device: 'sdb2',
        policies: ['gold', 'silver'],
        size_bytes: 1000,
        used_bytes: 750,
        avail_bytes: 250,
        mounted: true,
      },
      {
        node: '10.0.0.2:6200',
        device: 'sdb3',
        policies: ['gold', 'silver'],
        size_bytes: 2000,
        used_bytes: 1500,
        avail_bytes: 500,
        mounted: true,
      },
      {
        node: '10.0.0.3:6200',
        device: 'sdb4',
        policies: ['silver'],
        size_bytes: 500,
        used_bytes: 0,
        avail_bytes: 500,
        mounted: true,
      },
    ]);
  });

  it('when a node fails, a device is unmounted or missing from recon, then those devices go without usage and each is warned about', () => {
    const polled: NodeDiskUsage[] = [
      {
        node: { ip: '10.0.0.1', port: 6200 },
        ok: true,
        devices: [{ device: 'sdb1', mounted: false, size: null, used: null, avail: null }],
      },
      { node: { ip: '10.0.0.2', port: 6200 }, ok: false, error: new ReconError('10.0.0.2:6200', 'HTTP 500') },
      { node: { ip: '10.0.0.3', port: 6200 }, ok: true, devices: [usage('sdb4', 500, 100)] },
    ];
    const report = buildDeviceReport(swift, polled);
    expect(report.reported).toBe(1);
    expect(report.body.devices.filter((d) => !d.mounted).map((d) => d.device)).toEqual(['sdb1', 'sdb2', 'sdb3']);
    for (const d of report.body.devices.filter((x) => !x.mounted))
      expect(d).toMatchObject({ used_bytes: null, avail_bytes: null, size_bytes: null });
    expect(report.warnings).toHaveLength(2);
    expect(report.warnings[0]).toContain('node 10.0.0.2:6200');
    expect(report.warnings[1]).toBe('node 10.0.0.1:6200: recon does not list device sdb2; reported without usage');
  });

  it('when rings share nodes, then each storage node is polled once', () => {
    expect(storageNodes(swift)).toEqual([
      { ip: '10.0.0.1', port: 6200 },
      { ip: '10.0.0.2', port: 6200 },
      { ip: '10.0.0.3', port: 6200 },
    ]);
  });
});
