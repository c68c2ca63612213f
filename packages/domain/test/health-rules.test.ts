import {
  DEFAULT_HEALTH_THRESHOLDS as T,
  asyncFindings,
  clockSkewFindings,
  deviceFillFindings,
  driveErrorFindings,
  evaluateRound,
  quarantineFindings,
  replicationFindings,
  ringMismatchFindings,
  settleFindings,
  silentFindings,
  timeToFullFindings,
  unmountedFindings,
  validateHealthThresholds,
  withDefaults,
  type Finding,
  type HealthRound,
  type RoundNode,
} from '../src';

const AT = new Date('2026-11-28T21:00:00.000Z');
const SEC = AT.getTime() / 1000;
const node = (recon: RoundNode['recon'], more: Partial<RoundNode> = {}): RoundNode => ({
  node: '10.0.0.3:6200',
  serverTypes: ['object'],
  answered: true,
  error: null,
  elapsedMs: 20,
  recon,
  ...more,
});
const MIN = 60_000;
const HOUR = 60 * MIN;

describe('drive rules', () => {
  it('when /recon/unmounted lists a device, then a drive_unmounted warning names it and the mount error', () => {
    const f = unmountedFindings(
      node({
        unmounted: [
          { device: 'sdb1', mounted: false },
          { device: 'sdc1', mounted: '[Errno 5] EIO' },
        ],
      }),
      AT,
    );
    expect(f.map((x) => [x.code, x.severity, x.device])).toEqual([
      ['drive_unmounted', 'warning', 'sdb1'],
      ['drive_unmounted', 'warning', 'sdc1'],
    ]);
    expect(f[1]!.sentence).toContain('[Errno 5] EIO');
  });

  it('when unmounted was not read, then diskusage entries not mounted count instead', () => {
    const f = unmountedFindings(
      node({ diskusage: [{ device: 'sdd1', mounted: false, size: '', used: '', avail: '' }] }),
      AT,
    );
    expect(f.map((x) => x.device)).toEqual(['sdd1']);
  });

  it('when every device is mounted, then nothing', () => {
    expect(unmountedFindings(node({ unmounted: [] }), AT)).toEqual([]);
  });

  it('when swift-drive-audit counted errors above the limit, then drive_errors; at the limit, nothing', () => {
    expect(driveErrorFindings(node({ driveaudit: { drive_audit_errors: 2 } }), T, AT)[0]?.code).toBe('drive_errors');
    expect(
      driveErrorFindings(
        node({ driveaudit: { drive_audit_errors: 2 } }),
        withDefaults({ drive_audit_errors_max: 2 }),
        AT,
      ),
    ).toEqual([]);
    expect(driveErrorFindings(node({ driveaudit: { drive_audit_errors: null } }), T, AT)).toEqual([]);
  });

  it('when a device is 90 % or 95 % full, then a warning or a critical device_full; below, nothing', () => {
    const d = (device: string, used: number) => ({ device, mounted: true, size: 1000, used, avail: 1000 - used });
    const f = deviceFillFindings(node({ diskusage: [d('a', 899), d('b', 900), d('c', 950), d('d', 1000)] }), T, AT);
    expect(f.map((x) => [x.device, x.severity])).toEqual([
      ['b', 'warning'],
      ['c', 'critical'],
      ['d', 'critical'],
    ]);
    expect(f[0]!.sentence).toContain('90.0 % full');
  });
});

describe('node rules', () => {
  it('when a node does not answer, then node_silent: a warning since its last answer, critical after an hour', () => {
    const silent = node({}, { answered: false, error: 'connection refused' });
    const recent = silentFindings(silent, new Date(AT.getTime() - 10 * MIN), T, AT);
    expect(recent.map((x) => [x.code, x.severity, x.since])).toEqual([
      ['node_silent', 'warning', new Date(AT.getTime() - 10 * MIN)],
    ]);
    expect(silentFindings(silent, new Date(AT.getTime() - HOUR), T, AT)[0]!.severity).toBe('critical');
    expect(silentFindings(silent, null, T, AT)[0]!.severity).toBe('critical');
    expect(silentFindings(node({}), null, T, AT)).toEqual([]);
  });

  it('when a replicator last completed a pass over 24 h ago or never, then <type>_replication_stale per type', () => {
    const n = node(
      {
        'replication/object': { object_replication_last: SEC - 25 * 3600 },
        'replication/container': { replication_last: SEC - 3600 },
        'replication/account': { replication_last: null },
      },
      { serverTypes: ['account', 'container', 'object'] },
    );
    const f = replicationFindings(n, T, AT);
    expect(f.map((x) => x.code)).toEqual(['account_replication_stale', 'object_replication_stale']);
    expect(f[1]!.since).toEqual(new Date((SEC - 25 * 3600) * 1000));
  });

  it('when the limits are fractions of an hour, then a pass and a quarantine are judged to the second', () => {
    const t = withDefaults({ replication_max_age_hours: 0.005, quarantine_window_hours: 0.005 }); // 18 s
    const passed = (s: number) => node({ 'replication/object': { object_replication_last: SEC - s } });
    expect(replicationFindings(passed(17), t, AT)).toEqual([]);
    const stale = replicationFindings(passed(19), t, AT);
    expect(stale.map((x) => x.code)).toEqual(['object_replication_stale']);
    expect(stale[0]!.sentence).toContain('(limit 0.005 h)');
    const roseAt = new Date(AT.getTime() - 17_000);
    expect(quarantineFindings(node({}), 3, { count: 3, roseAt }, t, AT).findings).toHaveLength(1);
    const longAgo = new Date(AT.getTime() - 18_000);
    expect(quarantineFindings(node({}), 3, { count: 3, roseAt: longAgo }, t, AT).findings).toEqual([]);
  });

  it('when replication was not read or failed, then no replication finding', () => {
    expect(replicationFindings(node({ 'replication/object': { error: 'timed out' } }), T, AT)).toEqual([]);
    expect(replicationFindings(node({}), T, AT)).toEqual([]);
  });

  it('when async pendings exceed the limit, then async_pending_high', () => {
    expect(asyncFindings(node({}), 10_001, [], T, AT).map((x) => x.code)).toEqual(['async_pending_high']);
    expect(asyncFindings(node({}), 10_000, [], T, AT)).toEqual([]);
  });

  it('when async pendings grew at every round for an hour, then async_pending_growing since the start', () => {
    const h = [0, 15, 30, 45].map((m, i) => ({ at: new Date(AT.getTime() - (60 - m) * MIN), count: 10 + i }));
    const f = asyncFindings(node({}), 20, h, T, AT);
    expect(f.map((x) => [x.code, x.since])).toEqual([['async_pending_growing', h[0]!.at]]);
    // One fall inside the hour: not growing.
    const fell = h.map((s, i) => (i === 2 ? { ...s, count: 5 } : s));
    expect(asyncFindings(node({}), 20, fell, T, AT)).toEqual([]);
    // Less than an hour of history: not yet.
    expect(asyncFindings(node({}), 20, h.slice(1), T, AT)).toEqual([]);
  });

  it('when the quarantine count rises, then quarantined_rising for the window, then it ends', () => {
    const first = quarantineFindings(node({}), 3, { count: 1, roseAt: null }, T, AT);
    expect(first.roseAt).toEqual(AT);
    expect(first.findings.map((x) => x.code)).toEqual(['quarantined_rising']);
    const later = new Date(AT.getTime() + 23 * HOUR);
    expect(quarantineFindings(node({}), 3, { count: 3, roseAt: AT }, T, later).findings).toHaveLength(1);
    const after = new Date(AT.getTime() + 24 * HOUR);
    expect(quarantineFindings(node({}), 3, { count: 3, roseAt: AT }, T, after).findings).toEqual([]);
    // The first count a node reports is not a rise.
    expect(quarantineFindings(node({}), 3, { count: null, roseAt: null }, T, AT).findings).toEqual([]);
  });

  it("when a node's ring md5 differs from the cluster's ring, then ring_mismatch (critical) naming the file", () => {
    const ring = { 'object.ring.gz': 'a'.repeat(32), 'account.ring.gz': 'b'.repeat(32) };
    const n = node({
      ringmd5: { '/etc/swift/object.ring.gz': 'c'.repeat(32), '/etc/swift/account.ring.gz': 'b'.repeat(32) },
    });
    const f = ringMismatchFindings(n, ring, AT);
    expect(f.map((x) => [x.code, x.severity])).toEqual([['ring_mismatch', 'critical']]);
    expect(f[0]!.sentence).toContain('object.ring.gz');
    const same = node({ ringmd5: { '/etc/swift/object.ring.gz': 'a'.repeat(32) } });
    expect(ringMismatchFindings(same, ring, AT)).toEqual([]);
  });

  it('when a node clock is over 1 s off, collection time allowed for, then clock_skew', () => {
    const at = (offsetS: number, elapsedMs = 20) =>
      clockSkewFindings(node({ time: SEC + offsetS }, { elapsedMs }), T, AT);
    expect(at(-1.5).map((x) => x.code)).toEqual(['clock_skew']);
    expect(at(1.5)[0]!.sentence).toContain('ahead');
    expect(at(-0.9)).toEqual([]);
    // Asked 3 s into the round: a time 3.5 s after collected_at is within the span plus 1 s.
    expect(at(3.5, 3000)).toEqual([]);
    // A round that took 30 s may have asked the node at its end: 20 s ahead is no skew, 32 s is.
    const ended = new Date(AT.getTime() + 30_000);
    expect(clockSkewFindings(node({ time: SEC + 20 }), T, AT, ended)).toEqual([]);
    expect(clockSkewFindings(node({ time: SEC + 32 }), T, AT, ended).map((x) => x.code)).toEqual(['clock_skew']);
    // Behind is judged to the limit whatever the round's length.
    expect(clockSkewFindings(node({ time: SEC - 1.5 }), T, AT, ended).map((x) => x.code)).toEqual(['clock_skew']);
  });
});

describe('time to full', () => {
  const samples = (perDay: number, free: number, days = 7) =>
    Array.from({ length: days * 24 }, (_, h) => ({
      ringSet: 'gold',
      hour: new Date(AT.getTime() - (days * 24 - h) * HOUR),
      usedTb: 100 + (perDay * h) / 24,
      freeTb: free - (perDay * h) / 24,
    }));

  it('when a ring set grows 1 TB a day with 20 TB free, then ring_set_filling warns of about 20 days', () => {
    const f = timeToFullFindings(samples(1, 20 + (7 * 24 - 1) / 24), T, AT);
    expect(f.map((x) => [x.code, x.severity, x.ringSet])).toEqual([['ring_set_filling', 'warning', 'gold']]);
    expect(f[0]!.sentence).toContain('20.0 day(s)');
  });

  it('when full within 7 days, then critical; beyond 30 days or shrinking, nothing', () => {
    expect(timeToFullFindings(samples(1, 12), T, AT)[0]!.severity).toBe('critical');
    expect(timeToFullFindings(samples(1, 40), T, AT)).toEqual([]);
    expect(timeToFullFindings(samples(-1, 5), T, AT)).toEqual([]);
  });

  it('when the history spans less than a day, then no projection', () => {
    expect(timeToFullFindings(samples(1, 2).slice(-20), T, AT)).toEqual([]);
  });
});

describe('evaluateRound', () => {
  it('when a round is judged, then each rule speaks and the node state carries what the next round needs', () => {
    const round = {
      collectedAt: AT,
      ringMd5: {},
      nodes: [
        node({
          unmounted: [{ device: 'sdb1', mounted: false }],
          quarantined: { objects: 2, containers: 0, accounts: 0 },
          async: { async_pending: 4 },
        }),
        node({}, { node: '10.0.0.4:6200', answered: false, error: 'timed out' }),
      ],
    };
    const { findings, states } = evaluateRound(round, new Map(), [], T);
    expect(findings.map((f) => f.code).sort()).toEqual(['drive_unmounted', 'node_silent']);
    expect(states).toEqual([
      { node: '10.0.0.3:6200', lastAnsweredAt: AT, quarantined: 2, quarantinedRoseAt: null, asyncPending: 4 },
      { node: '10.0.0.4:6200', lastAnsweredAt: null, quarantined: null, quarantinedRoseAt: null, asyncPending: null },
    ]);
  });
});

describe('settleFindings', () => {
  const RING = { 'object.ring.gz': 'a'.repeat(32) };
  /** A node with a full device, a foreign ring and a clock 5 s behind, read at `at`. */
  const sick = (name: string, at: Date) =>
    node(
      {
        diskusage: [{ device: 'sdb1', mounted: true, size: 100, used: 96, avail: 4 }],
        ringmd5: { '/etc/swift/object.ring.gz': 'c'.repeat(32) },
        time: at.getTime() / 1000 - 5,
      },
      { node: name },
    );
  const silent = (name: string) => node({}, { node: name, answered: false, error: 'timed out' });
  const round = (at: Date, nodes: RoundNode[]): HealthRound => ({ collectedAt: at, ringMd5: RING, nodes });
  type Stored = Finding & { openedAt: Date };
  /** Runs the round's rules and settles the open findings as the API stores them. */
  const judge = (open: Stored[], r: HealthRound) => {
    const s = settleFindings(open, evaluateRound(r, new Map(), [], T).findings, r);
    const next: Stored[] = [
      ...s.held,
      ...s.kept.map((k) => ({ ...k.found, openedAt: k.open.openedAt })),
      ...s.opening.map((f) => ({ ...f, openedAt: r.collectedAt })),
    ];
    return { ...s, next };
  };
  const keys = (fs: Array<Pick<Finding, 'code' | 'node' | 'device'>>) =>
    fs.map((f) => `${f.code} ${f.node ?? '-'} ${f.device ?? '-'}`).sort();

  it('when a node with open findings is silent, then they stay open as they were; when it answers without the cause, they close', () => {
    const [a, b] = ['10.0.0.3:6200', '10.0.0.4:6200'];
    const filling: Stored = {
      code: 'ring_set_filling',
      severity: 'warning',
      node: null,
      device: null,
      ringSet: 'Policy-0',
      since: AT,
      sentence: 'filling',
      openedAt: AT,
    };
    const first = judge([filling], round(AT, [sick(a, AT), sick(b, AT)]));
    expect(keys(first.opening)).toEqual(
      [a, b].flatMap((n) => [`clock_skew ${n} -`, `device_full ${n} sdb1`, `ring_mismatch ${n} -`]).sort(),
    );
    expect(first.closing).toEqual([filling]); // no capacity history: a cluster finding is judged as usual

    // a is silent; b left the rings: a's findings are held unchanged, b's close.
    const later = new Date(AT.getTime() + 5 * MIN);
    const second = judge(first.next, round(later, [silent(a)]));
    expect(keys(second.held)).toEqual([`clock_skew ${a} -`, `device_full ${a} sdb1`, `ring_mismatch ${a} -`]);
    for (const f of second.held) expect(first.next).toContain(f);
    expect(second.held.every((f) => f.openedAt === AT)).toBe(true);
    expect(keys(second.opening)).toEqual([`node_silent ${a} -`]);
    expect(second.kept).toEqual([]);
    expect(keys(second.closing)).toEqual([`clock_skew ${b} -`, `device_full ${b} sdb1`, `ring_mismatch ${b} -`]);

    // Still sick once it answers: the same findings, open since the first round.
    const third = new Date(later.getTime() + 5 * MIN);
    const back = judge(second.next, round(third, [sick(a, third)]));
    expect(keys(back.kept.map((k) => k.open))).toEqual(keys(second.held));
    expect(back.next.filter((f) => f.code !== 'node_silent').every((f) => f.openedAt === AT)).toBe(true);
    expect(keys(back.closing)).toEqual([`node_silent ${a} -`]);

    // Silent again, then answering without the causes: held once more, then all closed.
    const fourth = new Date(third.getTime() + 5 * MIN);
    const again = judge(back.next, round(fourth, [silent(a)]));
    expect(keys(again.held)).toEqual(keys(second.held));
    const fifth = new Date(fourth.getTime() + 5 * MIN);
    const healthy = node(
      {
        diskusage: [{ device: 'sdb1', mounted: true, size: 100, used: 50, avail: 50 }],
        ringmd5: { '/etc/swift/object.ring.gz': 'a'.repeat(32) },
        time: fifth.getTime() / 1000,
      },
      { node: a },
    );
    const cured = judge(again.next, round(fifth, [healthy]));
    expect(cured.next).toEqual([]);
    expect(keys(cured.closing)).toEqual([...keys(second.held), `node_silent ${a} -`].sort());
  });
});

describe('settleFindings when one recon endpoint of a node fails', () => {
  const RING = { 'object.ring.gz': 'a'.repeat(32) };
  const a = '10.0.0.3:6200';
  const round = (nodes: RoundNode[]): HealthRound => ({ collectedAt: AT, ringMd5: RING, nodes });
  const open = (code: Finding['code'], device: string | null = null): Finding => ({
    code,
    severity: 'warning',
    node: a,
    device,
    ringSet: null,
    since: AT,
    sentence: code,
  });

  it('when diskusage and time fail but ringmd5 answers, then the fill and clock findings are held and the ring finding closes', () => {
    const full = open('device_full', 'sdb1');
    const skew = open('clock_skew');
    const ring = open('ring_mismatch');
    const r = round([
      node(
        {
          diskusage: { error: 'timed out' },
          ringmd5: { '/etc/swift/object.ring.gz': 'a'.repeat(32) },
        },
        { node: a },
      ),
    ]);
    const s = settleFindings([full, skew, ring], evaluateRound(r, new Map(), [], T).findings, r);
    expect(s.held).toEqual([full, skew]);
    expect(s.closing).toEqual([ring]);
  });

  it('when unmounted fails but diskusage shows every drive mounted, then the unmounted drive closes', () => {
    const unmounted = open('drive_unmounted', 'sdc1');
    const r = round([
      node(
        {
          unmounted: { error: 'HTTP 500' },
          diskusage: [{ device: 'sdc1', mounted: true, size: 100, used: 1, avail: 99 }],
        },
        { node: a },
      ),
    ]);
    const s = settleFindings([unmounted], evaluateRound(r, new Map(), [], T).findings, r);
    expect(s.closing).toEqual([unmounted]);
    expect(s.held).toEqual([]);
  });
});

describe('thresholds', () => {
  const refusal = (body: unknown): string => {
    try {
      validateHealthThresholds(body);
    } catch (err) {
      expect((err as { code: string }).code).toBe('INVALID_INPUT');
      return (err as Error).message;
    }
    throw new Error(`${JSON.stringify(body)} was accepted`);
  };

  it('when durations are fractions or integers, then they are taken as sent', () => {
    const body = {
      replication_max_age_hours: 0.005,
      quarantine_window_hours: 1,
      async_growing_minutes: 12.5,
      silent_critical_minutes: 1.5,
      full_warning_days: 2.5,
      full_critical_days: 1,
      full_projection_days: 1.5,
      fill_warning_pct: 80,
    };
    expect(validateHealthThresholds(body)).toEqual(body);
    // Form bodies send text.
    expect(validateHealthThresholds({ replication_max_age_hours: '0.25' })).toEqual({
      replication_max_age_hours: 0.25,
    });
  });

  it('when a duration is zero, negative, below its minimum or absurd, then a sentence says the bounds', () => {
    const atLeast = "The 'replication_max_age_hours' field must be at least 0.001.";
    expect(refusal({ replication_max_age_hours: 0 })).toContain(atLeast);
    expect(refusal({ replication_max_age_hours: -1 })).toContain(atLeast);
    expect(refusal({ replication_max_age_hours: 0.0001 })).toContain(atLeast);
    expect(refusal({ quarantine_window_hours: 721 })).toContain(
      "The 'quarantine_window_hours' field must be at most 720.",
    );
    expect(refusal({ replication_max_age_hours: 1e300 })).toContain('at most 8760');
    expect(refusal({ silent_critical_minutes: 0.5 })).toContain('at least 1');
    expect(refusal({ full_warning_days: 'soon' })).toContain(
      "The 'full_warning_days' field must be a number from 1 to 3650 (fractions allowed).",
    );
  });

  it('when a count, a percentage or milliseconds have a fraction, then it is refused', () => {
    for (const k of ['fill_warning_pct', 'async_pending_max', 'drive_audit_errors_max', 'clock_skew_ms'])
      expect(refusal({ [k]: 50.5 })).toContain(`The '${k}' field must be`);
  });
});
