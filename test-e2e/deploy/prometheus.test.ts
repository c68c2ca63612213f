import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * The alerting rules under Prometheus' own rule tester: `promtool test rules` evaluates
 * deploy/prometheus/alerts.test.yml's series against alerts.yml and checks each alert fires when
 * it should, with its labels and texts, and stays quiet otherwise. Debian's `prometheus` package
 * provides promtool (.ci/run installs it); in CI a missing promtool fails this test.
 */
const root = join(__dirname, '..', '..');
const dir = join(root, 'deploy', 'prometheus');
const run = promisify(execFile);
const PROMTOOL = process.env.PROMTOOL ?? 'promtool';

async function promtool(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(PROMTOOL, args, { timeout: 60_000 });
    return { code: 0, out: stdout + stderr };
  } catch (e) {
    const err = e as { code?: number | string; stdout?: string; stderr?: string };
    if (err.code === 'ENOENT')
      throw Object.assign(new Error(`${PROMTOOL} is not installed (apt-get install prometheus)`), { code: 'ENOENT' });
    return { code: typeof err.code === 'number' ? err.code : -1, out: (err.stdout ?? '') + (err.stderr ?? '') };
  }
}

const available = (async () => {
  try {
    await promtool('--version');
    return true;
  } catch {
    return false;
  }
})();

describe('deploy/prometheus: alerting rules', () => {
  /** Skips locally without promtool; CI (CI=true) fails instead. */
  const withPromtool = async (body: () => Promise<void>) => {
    if (!(await available)) {
      if (process.env.CI === 'true')
        throw new Error("promtool is missing in CI: .ci/run installs Debian's prometheus package for it.");
      console.warn('promtool not installed: skipping the alert rule tests (apt-get install prometheus)');
      return;
    }
    await body();
  };

  it('when promtool checks the rules and the example configuration, then both are valid and lint-clean', () =>
    withPromtool(async () => {
      const rules = await promtool('check', 'rules', join(dir, 'alerts.yml'));
      expect(rules.out).toContain('SUCCESS');
      expect(rules.code).toBe(0);
      const config = await promtool('check', 'config', join(dir, 'prometheus.yml'));
      expect(config.code).toBe(0);
    }));

  it('when the rule unit tests run, then every alert fires and stays quiet as alerts.test.yml expects', () =>
    withPromtool(async () => {
      const result = await promtool('test', 'rules', join(dir, 'alerts.test.yml'));
      expect(result.out).toContain('SUCCESS');
      expect(result.code).toBe(0);
    }));

  it('when each alert of the rules file is listed, then the unit tests make it both fire and stay quiet', () => {
    const rules = readFileSync(join(dir, 'alerts.yml'), 'utf8');
    const tests = readFileSync(join(dir, 'alerts.test.yml'), 'utf8');
    const alerts = [...new Set([...rules.matchAll(/^\s+- alert: (\w+)$/gm)].map((m) => m[1]!))];
    expect(alerts.sort()).toEqual(
      [
        'CairnCollectorStale',
        'CairnHealthCriticalFindings',
        'CairnHealthDeviceFull',
        'CairnHealthNodeSilent',
        'CairnHealthReplicationStale',
        'CairnHealthRoundsMissing',
        'CairnHealthWarningFindings',
        'CairnHigh5xxRate',
        'CairnLoginFailureSpike',
        'CairnPostgresUnavailable',
        'CairnRedisUnavailable',
        'CairnRingSetNearlyFull',
        'CairnServiceDown',
        'CairnUtilizationIncomplete',
      ].sort(),
    );
    for (const alert of alerts) {
      const cases = [...tests.matchAll(new RegExp(`alertname: ${alert}\\n\\s+exp_alerts:( \\[\\])?`, 'g'))];
      expect({ alert, quiet: cases.some((c) => c[1]) }).toEqual({ alert, quiet: true });
      expect({ alert, fires: cases.some((c) => !c[1]) }).toEqual({ alert, fires: true });
    }
  });

  /**
   * Each rule with one change that must break it: its unit tests then fail, naming the rule. Only
   * the tests of that rule run (each entry under `tests:` starts at `  - interval:`), which keeps
   * a dozen promtool runs to seconds.
   */
  const BROKEN: Array<[alert: string, from: string, to: string]> = [
    ['CairnRingSetNearlyFull', '(cairn_capacity_used_ratio) >= 0.8', '(cairn_capacity_used_ratio) >= 0.9'],
    [
      'CairnHealthCriticalFindings',
      '(cairn_health_findings_open{severity="critical"}) > 0',
      '(cairn_health_findings_open{severity="critical"}) > 2',
    ],
    [
      'CairnHealthWarningFindings',
      '(cairn_health_findings_open{severity="warning"})',
      '(cairn_health_findings_open{severity=~"warning|critical"})',
    ],
    ['CairnHealthRoundsMissing', '> 3 * (', '> 2 * ('],
    ['CairnHealthNodeSilent', '(cairn_health_node_answered) == 0', '(cairn_health_node_answered) == 1'],
    ['CairnHealthDeviceFull', '{name="fill_warning_pct"}', '{name="fill_critical_pct"}'],
    ['CairnHealthReplicationStale', '3600 * max by (cluster)', '60 * max by (cluster)'],
  ];

  it.each(BROKEN)(
    'when %s is broken (%s becomes %s), then the unit tests fail: promtool really evaluates it',
    (alert, from, to) =>
      withPromtool(async () => {
        const rules = readFileSync(join(dir, 'alerts.yml'), 'utf8');
        expect(rules.split(from)).toHaveLength(2);
        const scratch = mkdtempSync(join(tmpdir(), 'cairn-alerts-'));
        try {
          const [head, ...entries] = readFileSync(join(dir, 'alerts.test.yml'), 'utf8').split(/\n(?= {2}- interval:)/);
          const own = entries.filter((e) => e.includes(`alertname: ${alert}\n`));
          expect(own.length).toBeGreaterThan(0);
          const tests = join(scratch, 'alerts.test.yml');
          writeFileSync(tests, [head, ...own].join('\n') + '\n');
          // Those tests pass against the rules as they are: the change is what fails them.
          writeFileSync(join(scratch, 'alerts.yml'), rules);
          expect((await promtool('test', 'rules', tests)).code).toBe(0);
          writeFileSync(join(scratch, 'alerts.yml'), rules.replace(from, to));
          const result = await promtool('test', 'rules', tests);
          expect(result.code).not.toBe(0);
          expect(result.out).toContain(alert);
        } finally {
          rmSync(scratch, { recursive: true, force: true });
        }
      }),
  );
});
