import { compareDevices, nextSort, type DeviceRow, type DeviceSortKey } from '../../src/lib/device-sort';
import { devicePctUsed } from '../../src/lib/format';

const TB = 1e12;
const device = (
  device: string,
  used: number | null,
  avail: number | null,
  extra: Partial<DeviceRow> = {},
): DeviceRow => ({
  node: '10.0.0.1:6200',
  device,
  policies: ['gold'],
  ringSet: 'gold',
  mounted: used !== null,
  reported_at: '2026-11-25T00:00:00.000Z',
  size_bytes: null,
  used_bytes: used,
  avail_bytes: avail,
  pct: devicePctUsed(used, avail),
  ...extra,
});

const sorted = (rows: DeviceRow[], key: DeviceSortKey, desc: boolean) =>
  [...rows].sort((a, b) => compareDevices(a, b, key, desc)).map((d) => d.device);

describe('sorting the device table', () => {
  const rows = [
    device('sdb10', 3 * TB, 1 * TB), // 75 %, raw 4 TB
    device('sdb2', 1 * TB, 3 * TB), // 25 %, raw 4 TB
    device('sdz1', null, null), // unmounted
    device('sdb9', 9 * TB, 1 * TB, { size_bytes: 12 * TB }), // 90 %, size 12 TB
    device('sdb3', 0, 0), // reports, but no space: no percentage
  ];

  it('when sorted by percent used, then fullest first descending, emptiest first ascending, and devices without a percentage last both ways', () => {
    expect(sorted(rows, 'pct', true)).toEqual(['sdb9', 'sdb10', 'sdb2', 'sdz1', 'sdb3']);
    expect(sorted(rows, 'pct', false)).toEqual(['sdb2', 'sdb10', 'sdb9', 'sdz1', 'sdb3']);
  });

  it('when sorted by a text column, then numbers inside names sort naturally (sdb2 before sdb10)', () => {
    expect(sorted(rows, 'device', false)).toEqual(['sdb2', 'sdb3', 'sdb9', 'sdb10', 'sdz1']);
    expect(sorted(rows, 'device', true)).toEqual(['sdz1', 'sdb10', 'sdb9', 'sdb3', 'sdb2']);
  });

  it('when sorted by size, then the reported size counts, else used + free, and an unreported device is last', () => {
    expect(sorted(rows, 'size', true)).toEqual(['sdb9', 'sdb10', 'sdb2', 'sdb3', 'sdz1']);
    expect(sorted(rows, 'size', false).at(-1)).toBe('sdz1');
  });

  it('when sorted by bytes used, then numerically (not as text) with nulls last', () => {
    expect(sorted(rows, 'used_bytes', false)).toEqual(['sdb3', 'sdb2', 'sdb10', 'sdb9', 'sdz1']);
  });

  it('when a header is clicked, then a new numeric column starts descending, a new text column ascending, and the same column flips', () => {
    expect(nextSort({ key: 'pct', desc: true }, 'device', false)).toEqual({ key: 'device', desc: false });
    expect(nextSort({ key: 'device', desc: false }, 'used_bytes', true)).toEqual({ key: 'used_bytes', desc: true });
    expect(nextSort({ key: 'pct', desc: true }, 'pct', true)).toEqual({ key: 'pct', desc: false });
    expect(nextSort({ key: 'node', desc: false }, 'node', false)).toEqual({ key: 'node', desc: true });
  });
});
