import { countFindings, orderFindings } from '../../src/lib/health';

const f = (severity: 'warning' | 'critical', since: string, node: string | null, code = 'drive_unmounted') => ({
  severity,
  since,
  node,
  device: null,
  code,
});

describe('health findings in the console', () => {
  it('when findings are listed, then critical ones come first, then the longest-standing', () => {
    const ordered = orderFindings([
      f('warning', '2026-11-28T10:00:00Z', 'b'),
      f('critical', '2026-11-28T12:00:00Z', 'c'),
      f('warning', '2026-11-28T09:00:00Z', 'z'),
      f('critical', '2026-11-28T11:00:00Z', 'd'),
    ]);
    expect(ordered.map((x) => x.node)).toEqual(['d', 'c', 'z', 'b']);
  });

  it('when findings are counted, then by severity in words', () => {
    expect(countFindings([])).toBe('no open findings');
    expect(countFindings([f('critical', '', null), f('warning', '', null), f('warning', '', null)])).toBe(
      '1 critical, 2 warnings',
    );
    expect(countFindings([f('warning', '', null)])).toBe('1 warning');
  });
});
