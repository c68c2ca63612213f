import {
  parseRecordTime,
  presetStart,
  storageByPolicy,
  toSeries,
  total,
  transferBreakdown,
} from '../../src/lib/utilization';

const rec = (start: string, bytes: number, pct = 100) => ({
  start,
  end: '',
  bytes_used: bytes,
  object_count: 0,
  container_count: 0,
  pct_complete: pct,
});

describe('utilization chart data', () => {
  it('when a preset range is asked for, then start is that many days back, on the half hour, in UTC', () => {
    expect(presetStart(7, new Date('2026-11-24T22:47:13.512Z'))).toBe('2026-11-17T22:30:00Z');
    expect(presetStart(1, new Date('2026-11-24T22:10:00Z'))).toBe('2026-11-23T22:00:00Z');
  });

  it("when record bounds are parsed, then the API's '2026-11-24 22:00:00Z' is UTC", () => {
    expect(parseRecordTime('2026-11-24 22:00:00Z')).toBe(Date.UTC(2026, 10, 24, 22));
  });

  it('when series are built, then times are merged and sorted, and an hour with nothing known is a gap', () => {
    const a = [rec('2026-11-24 23:00:00Z', 5), rec('2026-11-24 22:00:00Z', 3)];
    const b = [rec('2026-11-24 22:00:00Z', 7), rec('2026-11-24 23:00:00Z', 0, 0)];
    const s = toSeries([a, b], (r) => r.bytes_used);
    expect(s.x).toEqual([Date.UTC(2026, 10, 24, 22) / 1000, Date.UTC(2026, 10, 24, 23) / 1000]);
    expect(s.ys).toEqual([
      [3, 5],
      [7, null],
    ]);
  });

  it('when transfer is totalled, then it is the sum over the records', () => {
    expect(total([{ n: 1 }, { n: 2 }, { n: 3 }], (r) => r.n)).toBe(6);
  });

  it("when the cluster's storage by policy is summed from summary rows, then averages and objects add up per policy index, in index order", () => {
    const p = (policy_index: number, bytes_used_avg: number, object_count: number) => ({
      policy_index,
      bytes_used_avg,
      bytes_used_peak: bytes_used_avg * 2,
      object_count,
      container_count: 1,
    });
    const totals = storageByPolicy([
      { policies: [p(2, 100, 1), p(0, 5e9, 10)] },
      { policies: [p(0, 1e9, 3), p(2, 0, 0)] },
      { policies: [] },
    ]);
    expect(totals).toEqual([
      { policy_index: 0, bytes_used_avg: 6e9, object_count: 13, accounts: 2 },
      { policy_index: 2, bytes_used_avg: 100, object_count: 1, accounts: 1 },
    ]);
    expect(storageByPolicy([])).toEqual([]);
  });
});

describe('transfer by class, API and network', () => {
  const figures = {
    bytes_in: 1000,
    bytes_out: 5000,
    req_count: 20,
    req_get: 6,
    req_head: 1,
    req_put: 3,
    req_post: 0,
    req_delete: 2,
    req_list: 1,
    req_copy: 1,
    req_other: 0,
    req_errors: 3,
    s3_bytes_in: 400,
    s3_bytes_out: 1000,
    s3_req_count: 5,
    internal_bytes_in: 100,
    internal_bytes_out: 4000,
    internal_req_count: 8,
  };

  it('when a range is broken down, then Swift is the total less S3 and external the total less internal', () => {
    const b = transferBreakdown(figures);
    expect(b.classes.map((c) => [c.cls, c.count])).toEqual([
      ['get', 6],
      ['head', 1],
      ['put', 3],
      ['post', 0],
      ['delete', 2],
      ['list', 1],
      ['copy', 1],
      ['other', 0],
    ]);
    expect(b.errors).toBe(3);
    expect(b.apis).toEqual([
      { label: 'Swift API', bytes_in: 600, bytes_out: 4000, req_count: 15 },
      { label: 'S3 API', bytes_in: 400, bytes_out: 1000, req_count: 5 },
    ]);
    expect(b.networks).toEqual([
      { label: 'External', bytes_in: 900, bytes_out: 1000, req_count: 12 },
      { label: 'Internal', bytes_in: 100, bytes_out: 4000, req_count: 8 },
    ]);
  });

  it('when hours from before classes were metered are in the range, then their requests are counted as unclassified', () => {
    // 20 requests, 14 in classes: 6 from hours recorded as totals only.
    expect(transferBreakdown(figures).unclassified).toBe(6);
    expect(transferBreakdown({ ...figures, req_get: 12 }).unclassified).toBe(0);
  });
});
