import type { ClusterHealthStatus, HealthFindingResource, HealthSeverity } from '@cairn/contract';

/** What a cluster's health badge says: the status in words, never colour alone. */
export const HEALTH_LABEL: Record<ClusterHealthStatus, string> = {
  ok: 'ok',
  warning: 'warning',
  critical: 'critical',
  unknown: 'no health round yet',
};

/** The badge's class, for its colour (the text above carries the meaning). */
export const HEALTH_CLASS: Record<ClusterHealthStatus, string> = {
  ok: 'badge good',
  warning: 'badge warn',
  critical: 'badge off',
  unknown: 'badge',
};

const RANK: Record<HealthSeverity, number> = { critical: 0, warning: 1 };

/** Critical first, then the longest-standing (`since`), then by node, device and code, so the order is stable. */
export function orderFindings<T extends Pick<HealthFindingResource, 'severity' | 'since' | 'node' | 'device' | 'code'>>(
  findings: readonly T[],
): T[] {
  const text = (s: string | null) => s ?? '';
  return [...findings].sort(
    (a, b) =>
      RANK[a.severity] - RANK[b.severity] ||
      Date.parse(a.since) - Date.parse(b.since) ||
      text(a.node).localeCompare(text(b.node)) ||
      text(a.device).localeCompare(text(b.device)) ||
      a.code.localeCompare(b.code),
  );
}

/** "1 critical, 2 warnings" (or "no open findings"): the counts the status stands for. */
export function countFindings(findings: readonly Pick<HealthFindingResource, 'severity'>[]): string {
  const critical = findings.filter((f) => f.severity === 'critical').length;
  const warnings = findings.length - critical;
  const parts = [
    critical > 0 ? `${critical} critical` : null,
    warnings > 0 ? `${warnings} ${warnings === 1 ? 'warning' : 'warnings'}` : null,
  ].filter((p): p is string => p !== null);
  return parts.length > 0 ? parts.join(', ') : 'no open findings';
}
