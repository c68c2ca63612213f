import { pct, type Finding } from './findings';
import { diskUsageOf, driveAuditErrorsOf, unmountedOf } from './recon';
import type { RoundNode } from './round';
import type { HealthThresholds } from './thresholds';

/**
 * Drive rules: a device not mounted, drive errors swift-drive-audit found, a device over its fill
 * limit. `at`: the round's time.
 */

/** /recon/unmounted, or diskusage's unmounted entries when unmounted was not read. */
export function unmountedFindings(node: RoundNode, at: Date): Finding[] {
  const listed =
    unmountedOf(node) ??
    diskUsageOf(node)
      ?.filter((d) => d.mounted !== true)
      .map((d) => ({ device: d.device, reason: typeof d.mounted === 'string' ? d.mounted : null }));
  return (listed ?? []).map((d) => ({
    code: 'drive_unmounted',
    severity: 'warning',
    node: node.node,
    device: d.device,
    ringSet: null,
    since: at,
    sentence:
      `Device ${d.device} on ${node.node} is not mounted${d.reason ? ` (${d.reason})` : ''}: Swift sends its partitions' writes to handoff devices meanwhile. ` +
      'Check the drive (dmesg, smartctl, xfs_repair -n); remount it if it is sound, otherwise set its weight to 0 in every ring that lists it, rebalance, push the rings and replace the drive (Swift ops runbook: handling drive failure).',
  }));
}

/** swift-drive-audit counts kernel-log errors per node; above the limit is a finding. */
export function driveErrorFindings(node: RoundNode, t: HealthThresholds, at: Date): Finding[] {
  const count = driveAuditErrorsOf(node);
  if (count === null || count <= t.drive_audit_errors_max) return [];
  return [
    {
      code: 'drive_errors',
      severity: 'warning',
      node: node.node,
      device: null,
      ringSet: null,
      since: at,
      sentence:
        `swift-drive-audit found ${count} drive error(s) in the kernel log of ${node.node} (limit ${t.drive_audit_errors_max}). ` +
        'Find the drive in /var/log/kern.log and with smartctl; a failing drive should be unmounted (swift-drive-audit does so when unmount_failed_device is on) and replaced as an unmounted one is (Swift ops runbook: drive failure).',
    },
  ];
}

/**
 * A mounted device's used share of its size at or above the warning or critical limit. Swift's
 * servers refuse writes once less than fallocate_reserve (1 % by default) is free and send them to
 * handoffs, which fill in turn; replication needs room to rebuild a failed drive's partitions.
 */
export function deviceFillFindings(node: RoundNode, t: HealthThresholds, at: Date): Finding[] {
  const findings: Finding[] = [];
  for (const d of diskUsageOf(node) ?? []) {
    if (d.mounted !== true || d.size === null || d.used === null || d.size <= 0) continue;
    const used = (d.used / d.size) * 100;
    if (used < t.fill_warning_pct) continue;
    const critical = used >= t.fill_critical_pct;
    findings.push({
      code: 'device_full',
      severity: critical ? 'critical' : 'warning',
      node: node.node,
      device: d.device,
      ringSet: null,
      since: at,
      sentence:
        `Device ${d.device} on ${node.node} is ${pct(used)} full (warning at ${t.fill_warning_pct} %, critical at ${t.fill_critical_pct} %): ` +
        'below 1 % free (fallocate_reserve) Swift refuses writes to it and puts them on handoffs. ' +
        'Add devices or nodes to its rings and rebalance, or lower its weight if only this device is fuller than its peers; check that replication is not stuck (Swift admin guide: preventing disk full scenarios).',
    });
  }
  return findings;
}
