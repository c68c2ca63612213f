import {
  DAY_MS,
  evaluateRound,
  errors,
  settleFindings,
  withDefaults,
  worstSeverity,
  type HealthRound,
  type HealthStatus,
  type HealthThresholds,
} from '@cairn/domain';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { recordAudit } from '../repositories/audit';
import { getCluster } from '../repositories/clusters';
import { capacityHistory } from '../repositories/devices';
import {
  healthNodes,
  latestRound,
  nodeMemory,
  openFindings,
  pageFindings,
  pruneHealth,
  reconcileFindings,
  setThresholdOverrides,
  storeRound,
  thresholdOverrides,
  type StoredFinding,
  type StoredHealthNode,
} from '../repositories/health';
import type { ListQuery, Page } from '../repositories/list-types';
import { recordCollectorRun } from '../repositories/monitoring';
import { API_ROOT } from '../resources/uris';
import { clusterTarget, findVisibleCluster } from './clusters';
import { auditActorOf, type Acting } from './context';
import { requireWriterOn } from './policy';

export type { StoredFinding, StoredHealthNode };

const MINUTE_MS = 60_000;
/** Rounds are kept this long (their counts; the findings' history is kept as long as the cluster). */
const ROUND_RETENTION_MS = 30 * DAY_MS;

/**
 * Stores a round and brings the cluster's findings to what its rules find now, in one transaction
 * that holds the cluster's row, so two rounds never interleave. Not audited: rounds are the
 * collector's routine writes (collector_runs and the cairn_collector_* metrics record them), as
 * frequent as every few minutes; threshold changes, an operator's decisions, are.
 */
export async function recordRound(
  db: Db,
  acting: Acting,
  rawId: string | undefined,
  roundOf: () => Promise<HealthRound>,
  receivedAt: () => Date,
): Promise<{ id: string; openFindings: number }> {
  const cluster = await findVisibleCluster(db, acting.operator, rawId);
  requireWriterOn(acting.operator, cluster.id);
  const round = await roundOf();
  return withDbErrors(() =>
    db.transaction(async (trx) => {
      if (!(await getCluster(trx, cluster.id, true))) throw errors.notFound(`No cluster with id '${cluster.id}'.`);
      const latest = await latestRound(trx, cluster.id);
      // The same round again (a retried post whose answer was lost): answered as the first time.
      if (latest && round.collectedAt.getTime() === latest.collectedAt.getTime())
        return { id: latest.id, openFindings: (await openFindings(trx, cluster.id)).length };
      if (latest && round.collectedAt.getTime() < latest.collectedAt.getTime())
        throw errors.invalidInput(
          `The round collected at ${round.collectedAt.toISOString()} is older than the cluster's latest round (${latest.collectedAt.toISOString()}); rounds are judged in order.`,
        );
      const t = withDefaults(await thresholdOverrides(trx, cluster.id));
      const at = round.collectedAt;
      // The async history reaches a little past the growth span: the rule needs a sample at its start.
      const samplesFrom = new Date(at.getTime() - (t.async_growing_minutes + 30) * MINUTE_MS);
      const memory = await nodeMemory(trx, cluster.id, samplesFrom);
      const capacity = (
        await capacityHistory(trx, cluster.id, new Date(at.getTime() - t.full_projection_days * DAY_MS), at, false)
      ).map((s) => ({ ringSet: s.ringSet, hour: s.hour, usedTb: s.totalUsedTb, freeTb: s.totalFreeTb }));
      const { findings, states } = evaluateRound(round, memory, capacity, t, receivedAt());
      const id = await storeRound(trx, cluster.id, round, states);
      const settled = settleFindings(await openFindings(trx, cluster.id), findings, round);
      await reconcileFindings(trx, cluster.id, settled, at);
      await pruneHealth(trx, cluster.id, samplesFrom, new Date(at.getTime() - ROUND_RETENTION_MS));
      await recordCollectorRun(trx, cluster.id, 'health');
      return { id, openFindings: settled.opening.length + settled.kept.length + settled.held.length };
    }),
  );
}

export interface ClusterHealth {
  status: HealthStatus;
  collectedAt: Date | null;
  findings: StoredFinding[];
  nodes: StoredHealthNode[];
  thresholds: HealthThresholds;
}

/** A visible cluster's current health: status, open findings, each node's latest word. */
export async function current(db: Db, acting: Acting, rawId: string | undefined): Promise<ClusterHealth> {
  const cluster = await findVisibleCluster(db, acting.operator, rawId);
  const [latest, findings, nodes, overrides] = [
    await latestRound(db, cluster.id),
    await openFindings(db, cluster.id),
    await healthNodes(db, cluster.id),
    await thresholdOverrides(db, cluster.id),
  ];
  return {
    status: latest === null ? 'unknown' : worstSeverity(findings.map((f) => f.severity)),
    collectedAt: latest?.collectedAt ?? null,
    findings,
    nodes,
    thresholds: withDefaults(overrides),
  };
}

export async function history(
  db: Db,
  acting: Acting,
  rawId: string | undefined,
  query: ListQuery,
  open: boolean | undefined,
): Promise<Page<StoredFinding>> {
  const cluster = await findVisibleCluster(db, acting.operator, rawId);
  return pageFindings(db, cluster.id, query, open);
}

export async function thresholds(db: Db, acting: Acting, rawId: string | undefined): Promise<HealthThresholds> {
  const cluster = await findVisibleCluster(db, acting.operator, rawId);
  return withDefaults(await thresholdOverrides(db, cluster.id));
}

/**
 * Replaces the thresholds an operator set for a cluster (omitted or null: the default); audited
 * with the effective thresholds before and after. Takes effect from the next round.
 */
export async function replaceThresholds(
  db: Db,
  acting: Acting,
  rawId: string | undefined,
  overridesOf: () => Promise<Partial<HealthThresholds>>,
): Promise<HealthThresholds> {
  const cluster = await findVisibleCluster(db, acting.operator, rawId);
  requireWriterOn(acting.operator, cluster.id);
  const overrides = await overridesOf();
  return withDbErrors(() =>
    db.transaction(async (trx) => {
      if (!(await getCluster(trx, cluster.id, true))) throw errors.notFound(`No cluster with id '${cluster.id}'.`);
      const before = withDefaults(await thresholdOverrides(trx, cluster.id));
      await setThresholdOverrides(trx, cluster.id, overrides);
      const after = withDefaults(overrides);
      await recordAudit(trx, auditActorOf(acting), {
        action: 'update',
        target: { ...clusterTarget(cluster), uri: `${API_ROOT}/clusters/${cluster.id}/health/thresholds/` },
        before: { ...before },
        after: { ...after },
      });
      return after;
    }),
  );
}
