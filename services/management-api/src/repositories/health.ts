import type { Knex } from 'knex';
import type {
  FindingCode,
  HealthRound,
  HealthStatus,
  HealthThresholds,
  NodeMemory,
  NodeState,
  Settlement,
  Severity,
} from '@cairn/domain';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { listPage } from './list-planner';
import type { ListQuery, Page } from './list-types';

/** SQL of cluster health (see the cluster_health migration). '' in node/device/ring_set is none. */

const raw = async <T>(db: Db, sql: string, bindings: unknown[] = []): Promise<T[]> =>
  ((await withDbErrors(() => db.raw(sql, bindings as Knex.RawBinding[]))) as { rows: T[] }).rows;

const dateOrNull = (v: unknown): Date | null => (v === null || v === undefined ? null : new Date(v as string));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const json = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);

export async function thresholdOverrides(db: Db, clusterId: number): Promise<Partial<HealthThresholds>> {
  const [row] = await raw<{ thresholds: unknown }>(
    db,
    'SELECT thresholds FROM health_thresholds WHERE cluster_id = ?',
    [clusterId],
  );
  return row ? (json(row.thresholds) as Partial<HealthThresholds>) : {};
}

export async function setThresholdOverrides(
  db: Db,
  clusterId: number,
  overrides: Partial<HealthThresholds>,
): Promise<void> {
  await raw(
    db,
    `INSERT INTO health_thresholds (cluster_id, thresholds, updated_at) VALUES (?, ?::jsonb, now())
     ON CONFLICT (cluster_id) DO UPDATE SET thresholds = EXCLUDED.thresholds, updated_at = now()`,
    [clusterId, JSON.stringify(overrides)],
  );
}

export async function latestRound(db: Db, clusterId: number): Promise<{ id: string; collectedAt: Date } | null> {
  const [row] = await raw<{ id: string | number; collected_at: unknown }>(
    db,
    'SELECT id, collected_at FROM health_rounds WHERE cluster_id = ? ORDER BY collected_at DESC LIMIT 1',
    [clusterId],
  );
  return row ? { id: String(row.id), collectedAt: new Date(row.collected_at as string) } : null;
}

/** What the rules remember of each node: its latest row and its async samples since `since`. */
export async function nodeMemory(db: Db, clusterId: number, since: Date): Promise<Map<string, NodeMemory>> {
  const nodes = await raw<{
    node: string;
    last_answered_at: unknown;
    quarantined: unknown;
    quarantined_rose_at: unknown;
  }>(db, 'SELECT node, last_answered_at, quarantined, quarantined_rose_at FROM health_nodes WHERE cluster_id = ?', [
    clusterId,
  ]);
  const samples = await raw<{ node: string; collected_at: unknown; async_pending: unknown }>(
    db,
    'SELECT node, collected_at, async_pending FROM health_node_samples WHERE cluster_id = ? AND collected_at >= ?',
    [clusterId, since],
  );
  const memory = new Map<string, NodeMemory>(
    nodes.map((n) => [
      n.node,
      {
        lastAnsweredAt: dateOrNull(n.last_answered_at),
        quarantined: numOrNull(n.quarantined),
        quarantinedRoseAt: dateOrNull(n.quarantined_rose_at),
        asyncHistory: [],
      },
    ]),
  );
  for (const s of samples)
    memory.get(s.node)?.asyncHistory.push({ at: new Date(s.collected_at as string), count: Number(s.async_pending) });
  return memory;
}

/** Stores a round: its row, each node's latest word, async samples; drops what ages out. */
export async function storeRound(db: Db, clusterId: number, round: HealthRound, states: NodeState[]): Promise<string> {
  const at = round.collectedAt;
  const [row] = await raw<{ id: string | number }>(
    db,
    `INSERT INTO health_rounds (cluster_id, collected_at, node_count, answered_count, ring_md5)
     VALUES (?, ?, ?, ?, ?::jsonb) RETURNING id`,
    [clusterId, at, round.nodes.length, round.nodes.filter((n) => n.answered).length, JSON.stringify(round.ringMd5)],
  );
  const roundId = String(row!.id);
  const byNode = new Map(states.map((s) => [s.node, s]));
  const n = round.nodes;
  await raw(db, 'DELETE FROM health_nodes WHERE cluster_id = ? AND NOT (node = ANY(?::text[]))', [
    clusterId,
    n.map((x) => x.node),
  ]);
  if (n.length > 0) {
    // One statement for any number of nodes: columns travel as arrays and are unnested.
    await raw(
      db,
      `INSERT INTO health_nodes (cluster_id, node, round_id, server_types, answered, error, elapsed_ms, collected_at,
                                 last_answered_at, quarantined, quarantined_rose_at, recon)
       SELECT ?, t.node, ?, string_to_array(t.types, ','), t.answered, t.error, t.elapsed, ?, t.last_answered, t.quarantined,
              t.rose, t.recon::jsonb
         FROM unnest(?::text[], ?::text[], ?::boolean[], ?::text[], ?::int[], ?::timestamptz[], ?::bigint[], ?::timestamptz[], ?::text[])
           AS t(node, types, answered, error, elapsed, last_answered, quarantined, rose, recon)
       ON CONFLICT (cluster_id, node) DO UPDATE SET round_id = EXCLUDED.round_id, server_types = EXCLUDED.server_types,
         answered = EXCLUDED.answered, error = EXCLUDED.error, elapsed_ms = EXCLUDED.elapsed_ms,
         collected_at = EXCLUDED.collected_at, last_answered_at = EXCLUDED.last_answered_at,
         quarantined = EXCLUDED.quarantined, quarantined_rose_at = EXCLUDED.quarantined_rose_at, recon = EXCLUDED.recon`,
      [
        clusterId,
        roundId,
        at,
        n.map((x) => x.node),
        n.map((x) => x.serverTypes.join(',')),
        n.map((x) => x.answered),
        n.map((x) => x.error),
        n.map((x) => x.elapsedMs),
        n.map((x) => byNode.get(x.node)?.lastAnsweredAt?.toISOString() ?? null),
        n.map((x) => byNode.get(x.node)?.quarantined ?? null),
        n.map((x) => byNode.get(x.node)?.quarantinedRoseAt?.toISOString() ?? null),
        n.map((x) => JSON.stringify(x.recon)),
      ],
    );
  }
  const sampled = states.filter((s) => s.asyncPending !== null);
  if (sampled.length > 0)
    await raw(
      db,
      `INSERT INTO health_node_samples (cluster_id, node, collected_at, async_pending)
       SELECT ?, t.node, ?, t.count FROM unnest(?::text[], ?::bigint[]) AS t(node, count)
       ON CONFLICT (cluster_id, node, collected_at) DO UPDATE SET async_pending = EXCLUDED.async_pending`,
      [clusterId, at, sampled.map((s) => s.node), sampled.map((s) => s.asyncPending)],
    );
  return roundId;
}

/** Drops samples the rules no longer read and rounds past their 30 days. */
export async function pruneHealth(db: Db, clusterId: number, samplesBefore: Date, roundsBefore: Date): Promise<void> {
  await raw(db, 'DELETE FROM health_node_samples WHERE cluster_id = ? AND collected_at < ?', [
    clusterId,
    samplesBefore,
  ]);
  await raw(db, 'DELETE FROM health_rounds WHERE cluster_id = ? AND collected_at < ?', [clusterId, roundsBefore]);
}

export interface StoredFinding {
  id: string;
  code: FindingCode;
  severity: Severity;
  node: string | null;
  device: string | null;
  ringSet: string | null;
  since: Date;
  sentence: string;
  openedAt: Date;
  lastSeenAt: Date;
  closedAt: Date | null;
}

const FINDING_COLUMNS = [
  'f.id',
  'f.code',
  'f.severity',
  'f.node',
  'f.device',
  'f.ring_set',
  'f.since',
  'f.sentence',
  'f.opened_at',
  'f.last_seen_at',
  'f.closed_at',
];

const orNull = (v: unknown): string | null => (v === '' || v === null || v === undefined ? null : String(v));

const toFinding = (r: Record<string, unknown>): StoredFinding => ({
  id: String(r.id),
  code: r.code as FindingCode,
  severity: r.severity as Severity,
  node: orNull(r.node),
  device: orNull(r.device),
  ringSet: orNull(r.ring_set),
  since: new Date(r.since as string),
  sentence: String(r.sentence),
  openedAt: new Date(r.opened_at as string),
  lastSeenAt: new Date(r.last_seen_at as string),
  closedAt: dateOrNull(r.closed_at),
});

export async function openFindings(db: Db, clusterId: number): Promise<StoredFinding[]> {
  const rows = await withDbErrors(() =>
    db('health_findings as f')
      .select(FINDING_COLUMNS)
      .where('f.cluster_id', clusterId)
      .whereNull('f.closed_at')
      .orderBy('f.id'),
  );
  return (rows as Array<Record<string, unknown>>).map(toFinding);
}

/**
 * Writes what a round settled (settleFindings): a kept finding keeps its opened_at and since and
 * takes the round's severity, sentence and last_seen_at; a new one opens at `at`; a closing one
 * closes at `at`; a held one is not touched.
 */
export async function reconcileFindings(
  db: Db,
  clusterId: number,
  settled: Settlement<StoredFinding>,
  at: Date,
): Promise<void> {
  const closing = settled.closing.map((f) => f.id);
  const kept = settled.kept;
  const opening = settled.opening;
  if (closing.length > 0)
    await raw(db, 'UPDATE health_findings SET closed_at = ? WHERE id = ANY(?::bigint[])', [at, closing]);
  if (kept.length > 0)
    await raw(
      db,
      `UPDATE health_findings f SET severity = t.severity, sentence = t.sentence, last_seen_at = ?
         FROM unnest(?::bigint[], ?::text[], ?::text[]) AS t(id, severity, sentence) WHERE f.id = t.id`,
      [at, kept.map((k) => k.open.id), kept.map((k) => k.found.severity), kept.map((k) => k.found.sentence)],
    );
  if (opening.length > 0)
    await raw(
      db,
      `INSERT INTO health_findings (cluster_id, code, severity, node, device, ring_set, since, sentence, opened_at, last_seen_at)
       SELECT ?, t.code, t.severity, t.node, t.device, t.ring_set, t.since, t.sentence, ?, ?
         FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::timestamptz[], ?::text[])
           AS t(code, severity, node, device, ring_set, since, sentence)`,
      [
        clusterId,
        at,
        at,
        opening.map((f) => f.code),
        opening.map((f) => f.severity),
        opening.map((f) => f.node ?? ''),
        opening.map((f) => f.device ?? ''),
        opening.map((f) => f.ringSet ?? ''),
        opening.map((f) => f.since.toISOString()),
        opening.map((f) => f.sentence),
      ],
    );
}

/** One page of a cluster's findings, newest first; `open`: only open (true) or closed (false) ones. */
export async function pageFindings(
  db: Db,
  clusterId: number,
  query: ListQuery,
  open?: boolean,
): Promise<Page<StoredFinding>> {
  return withDbErrors(async () => {
    const scope = (qb: Knex.QueryBuilder) => {
      qb.where('f.cluster_id', clusterId);
      if (open === true) qb.whereNull('f.closed_at');
      if (open === false) qb.whereNotNull('f.closed_at');
    };
    const page = await listPage<Record<string, unknown>>(
      {
        db,
        table: 'health_findings',
        alias: 'f',
        columns: FINDING_COLUMNS,
        scope,
        defaultOrdering: [{ alias: 'f', column: 'id', desc: true }],
      },
      query,
    );
    return { total: page.total, rows: page.rows.map(toFinding) };
  });
}

export interface StoredHealthNode {
  node: string;
  serverTypes: string[];
  answered: boolean;
  error: string | null;
  collectedAt: Date;
  lastAnsweredAt: Date | null;
  recon: Record<string, unknown>;
}

export async function healthNodes(db: Db, clusterId: number): Promise<StoredHealthNode[]> {
  const rows = await raw<Record<string, unknown>>(
    db,
    `SELECT node, server_types, answered, error, collected_at, last_answered_at, recon
       FROM health_nodes WHERE cluster_id = ? ORDER BY node`,
    [clusterId],
  );
  return rows.map((r) => ({
    node: String(r.node),
    serverTypes: (r.server_types as string[]) ?? [],
    answered: Boolean(r.answered),
    error: orNull(r.error),
    collectedAt: new Date(r.collected_at as string),
    lastAnsweredAt: dateOrNull(r.last_answered_at),
    recon: json(r.recon) as Record<string, unknown>,
  }));
}

/**
 * Each cluster's status in one statement: its worst open finding, `ok` with none, `unknown`
 * before its first round. EXISTS probes on health_findings_open_severity_idx stop at the first
 * row: a cluster with a thousand open findings costs what one with a single one does
 * (docs/health.md has the measurement).
 */
export async function healthStatusOf(db: Db, ids: number[]): Promise<Map<number, HealthStatus>> {
  if (ids.length === 0) return new Map();
  const rows = await raw<{ id: number; worst: string | null; rounds: boolean }>(
    db,
    `SELECT c.id,
            CASE WHEN EXISTS (SELECT 1 FROM health_findings f
                               WHERE f.cluster_id = c.id AND f.closed_at IS NULL AND f.severity = 'critical') THEN 'critical'
                 WHEN EXISTS (SELECT 1 FROM health_findings f WHERE f.cluster_id = c.id AND f.closed_at IS NULL) THEN 'warning'
            END AS worst,
            EXISTS (SELECT 1 FROM health_rounds r WHERE r.cluster_id = c.id) AS rounds
       FROM unnest(?::int[]) AS c(id)`,
    [ids],
  );
  return new Map(rows.map((r) => [Number(r.id), !r.rounds ? 'unknown' : ((r.worst as Severity | null) ?? 'ok')]));
}

export interface OpenFindingCount {
  cluster: string;
  severity: Severity;
  code: string;
  count: number;
}

/** Open findings per cluster, severity and code: a few dozen rows for a Prometheus gauge. */
export async function openFindingCounts(db: Db): Promise<OpenFindingCount[]> {
  const rows = await raw<{ cluster: string; severity: Severity; code: string; count: number }>(
    db,
    `SELECT c.name AS cluster, f.severity, f.code, count(*)::int AS count
       FROM health_findings f JOIN clusters c ON c.id = f.cluster_id
      WHERE f.closed_at IS NULL GROUP BY c.name, f.severity, f.code`,
  );
  return rows.map((r) => ({ ...r, count: Number(r.count) }));
}

export interface HealthNodeFigures {
  cluster: string;
  node: string;
  serverTypes: string[];
  answered: boolean;
  elapsedMs: number;
  collectedAt: Date;
  /** When the API received the round that carried this node's latest word. */
  receivedAt: Date;
  /** Only the recon documents the per-node metrics read (not diskusage, ringmd5, load, …). */
  recon: Record<string, unknown>;
}

/**
 * Every stored node's latest word with just the recon documents the metrics read, for the
 * clusters the API knows (health_nodes holds only nodes of the latest round of each cluster).
 */
export async function healthNodeFigures(db: Db): Promise<HealthNodeFigures[]> {
  const rows = await raw<Record<string, unknown>>(
    db,
    `SELECT c.name AS cluster, n.node, n.server_types, n.answered, n.elapsed_ms, n.collected_at, r.received_at,
            jsonb_build_object('async', n.recon->'async',
              'quarantined', n.recon->'quarantined', 'time', n.recon->'time',
              'replication/account', n.recon->'replication/account',
              'replication/container', n.recon->'replication/container',
              'replication/object', n.recon->'replication/object') AS recon
       FROM health_nodes n
       JOIN clusters c ON c.id = n.cluster_id
       LEFT JOIN health_rounds r ON r.id = n.round_id`,
  );
  return rows.map((r) => ({
    cluster: String(r.cluster),
    node: String(r.node),
    serverTypes: (r.server_types as string[]) ?? [],
    answered: Boolean(r.answered),
    elapsedMs: Number(r.elapsed_ms),
    collectedAt: new Date(r.collected_at as string),
    receivedAt: new Date((r.received_at ?? r.collected_at) as string),
    recon: json(r.recon) as Record<string, unknown>,
  }));
}

/** The thresholds operators changed, per cluster name (the others default). */
export async function thresholdOverridesByCluster(db: Db): Promise<Map<string, Partial<HealthThresholds>>> {
  const rows = await raw<{ cluster: string; thresholds: unknown }>(
    db,
    'SELECT c.name AS cluster, t.thresholds FROM health_thresholds t JOIN clusters c ON c.id = t.cluster_id',
  );
  return new Map(rows.map((r) => [r.cluster, json(r.thresholds) as Partial<HealthThresholds>]));
}

/**
 * Seconds between each cluster's last two rounds (collection times): how often its collector
 * runs. Two index rows per cluster; no row for a cluster with fewer than two rounds.
 */
export async function roundIntervals(db: Db): Promise<Array<{ cluster: string; seconds: number }>> {
  const rows = await raw<{ cluster: string; seconds: number }>(
    db,
    `SELECT c.name AS cluster, extract(epoch FROM max(r.collected_at) - min(r.collected_at))::float8 AS seconds
       FROM clusters c
       CROSS JOIN LATERAL (SELECT collected_at FROM health_rounds
                            WHERE cluster_id = c.id ORDER BY collected_at DESC LIMIT 2) r
      GROUP BY c.name HAVING count(*) = 2`,
  );
  return rows.map((r) => ({ cluster: r.cluster, seconds: Number(r.seconds) }));
}

/**
 * The fullest `limit` mounted devices of each cluster's latest round, used / size. Computed here
 * rather than from the documents: a thousand nodes of a dozen devices are twelve thousand
 * elements to ship for fifty kept. The filter is diskUsageOf's (domain health/recon.ts): an
 * object with a string device, mounted true, numeric size above 0 and used.
 */
export async function fullestDevices(
  db: Db,
  limit: number,
): Promise<Array<{ cluster: string; node: string; device: string; ratio: number }>> {
  const rows = await raw<{ cluster: string; node: string; device: string; ratio: number }>(
    db,
    `SELECT cluster, node, device, ratio FROM (
       SELECT c.name AS cluster, n.node, d->>'device' AS device, (d->>'used')::float8 / (d->>'size')::float8 AS ratio,
              row_number() OVER (PARTITION BY n.cluster_id
                                 ORDER BY (d->>'used')::float8 / (d->>'size')::float8 DESC, n.node, d->>'device') AS rank
         FROM health_nodes n
         JOIN clusters c ON c.id = n.cluster_id
         CROSS JOIN LATERAL jsonb_array_elements(
           CASE WHEN jsonb_typeof(n.recon->'diskusage') = 'array' THEN n.recon->'diskusage' ELSE '[]'::jsonb END) AS d
        WHERE n.answered AND jsonb_typeof(d) = 'object' AND d->'mounted' = 'true'::jsonb
          AND jsonb_typeof(d->'device') = 'string' AND jsonb_typeof(d->'used') = 'number'
          AND jsonb_typeof(d->'size') = 'number' AND (d->>'size')::float8 > 0
     ) x WHERE rank <= ?`,
    [limit],
  );
  return rows.map((r) => ({ ...r, ratio: Number(r.ratio) }));
}
