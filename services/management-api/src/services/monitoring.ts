import type { Knex } from 'knex';
import {
  collectorRuns,
  incompleteHours,
  ringSetUsage,
  type CollectorRun,
  type IncompleteHours,
  type RingSetUsage,
} from '../repositories/monitoring';
import { openFindingCounts, type OpenFindingCount } from '../repositories/health';
import { readHealthFigures, type HealthFigures } from './health-figures';

export type { CollectorRun, HealthFigures, IncompleteHours, OpenFindingCount, RingSetUsage };

/** What the management API's collector and capacity metrics show, read from Postgres. */
export interface MonitoringSnapshot {
  collectors: CollectorRun[];
  capacity: RingSetUsage[];
  incomplete: IncompleteHours[];
  /** Open health findings per cluster, severity and code. */
  findings: OpenFindingCount[];
  /** Nodes, devices and replication of each cluster's latest health round. */
  health: HealthFigures;
}

const HOUR_MS = 3_600_000;

/**
 * The windows whose hours should be complete by now. Storage: the 24 hours before the current
 * one (a round posts as it goes). Transfer: the 24 hours before those, because access logs are
 * ingested once rotated, which may be daily.
 */
export function incompleteWindows(now: Date): Record<'storage' | 'transfer', { from: Date; to: Date }> {
  const hour = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  return {
    storage: { from: new Date(hour - 24 * HOUR_MS), to: new Date(hour) },
    transfer: { from: new Date(hour - 48 * HOUR_MS), to: new Date(hour - 24 * HOUR_MS) },
  };
}

export async function monitoringSnapshot(db: Knex, now: Date): Promise<MonitoringSnapshot> {
  const [collectors, capacity, incomplete, findings, health] = await Promise.all([
    collectorRuns(db),
    ringSetUsage(db),
    incompleteHours(db, incompleteWindows(now)),
    openFindingCounts(db),
    readHealthFigures(db, now),
  ]);
  return { collectors, capacity, incomplete, findings, health };
}
