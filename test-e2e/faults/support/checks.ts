import type { Knex } from 'knex';
import { ADMIN_AUTH } from './services';
import { MAX_ANSWER_MS, isClearUnavailable, show, type Outcome, type Recorder, type ServiceName } from './client';
import type { Load } from './load';

/** A dependency must be usable again through each service within this long after it is back. */
export const RECOVERY_MS = 5_000;

/**
 * Answers that break the outage contract: anything but the expected success or a clear 503 (so
 * never a 401 that tells a client its password is wrong, never a 500), no answer at all, or an
 * answer slower than 5 s.
 */
export function contractBreaches(outcomes: Outcome[], faultAt: number, readyAt: number): string[] {
  const bad: string[] = [];
  // When it started, relative to the fault and to the dependency's return: tells load from fault.
  const when = (o: Outcome) => `[started ${o.start - faultAt} ms after the fault, ${o.start - readyAt} ms after ready]`;
  for (const o of outcomes) {
    if (o.end - o.start > MAX_ANSWER_MS) bad.push(`slower than ${MAX_ANSWER_MS} ms ${when(o)}: ${show(o)}`);
    else if (!o.ok && !isClearUnavailable(o)) bad.push(`neither success nor a clear 503 ${when(o)}: ${show(o)}`);
  }
  return bad;
}

export interface Recovery {
  service: ServiceName;
  /** ms from the dependency being ready to the end of the first success started after that. */
  firstSuccessMs: number | null;
  /** Failures among requests started more than RECOVERY_MS after the dependency was ready. */
  lateFailures: string[];
}

export function recovery(rec: Recorder, service: ServiceName, readyAt: number, until: number): Recovery {
  const after = rec.between(service, readyAt, until);
  const first = after.find((o) => o.ok);
  return {
    service,
    firstSuccessMs: first ? first.end - readyAt : null,
    lateFailures: after.filter((o) => o.start >= readyAt + RECOVERY_MS && !o.ok).map(show),
  };
}

/** Failed requests (any kind) of a service within a window: proves the fault was felt. */
export const failuresBetween = (rec: Recorder, service: ServiceName, from: number, to: number): number =>
  rec.between(service, from, to).filter((o) => !o.ok).length;

/**
 * The database against the ledger: every acknowledged create exists (unless its delete was
 * acknowledged), nothing refused was written, every acknowledged PATCH and only those applied,
 * and the trigger-kept user count equals the rows.
 */
export async function databaseBreaches(db: Knex, load: Load): Promise<string[]> {
  const bad: string[] = [];
  const rows = (await db('storage_users').select('username', 'enabled')) as Array<{
    username: string;
    enabled: boolean;
  }>;
  const byName = new Map(rows.map((r) => [r.username, r]));
  for (const u of load.users) {
    const row = byName.get(u.name);
    if (u.exists === true && !row) bad.push(`${u.name}: acknowledged (${u.create.status}) but missing`);
    if (u.exists === false && row)
      bad.push(`${u.name}: answered with an error or deleted (204), yet in the database: ${show(u.create)}`);
    if (row && u.enabled !== 'unknown' && row.enabled !== u.enabled)
      bad.push(`${u.name}: enabled=${row.enabled}, but the acknowledged state is ${u.enabled}`);
  }
  bad.push(...(await counterBreaches(db)));
  return bad;
}

/** cluster_user_counts (kept by triggers) against the real number of rows per cluster. */
export async function counterBreaches(db: Knex): Promise<string[]> {
  const { rows } = (await db.raw(`
    SELECT c.id, coalesce(k.user_count, 0)::int AS counted, (SELECT count(*) FROM storage_users u WHERE u.cluster_id = c.id)::int AS real
      FROM clusters c LEFT JOIN cluster_user_counts k ON k.cluster_id = c.id`)) as {
    rows: Array<{ id: number; counted: number; real: number }>;
  };
  return rows
    .filter((r) => r.counted !== r.real)
    .map((r) => `cluster ${r.id}: user_count ${r.counted} but ${r.real} rows`);
}

/** The API's total_count for the default cluster: what an operator sees. */
export async function apiTotalCount(apiUrl: string): Promise<number> {
  const res = await fetch(`${apiUrl}/api/v1/users/?cluster=1&limit=1`, { headers: { Authorization: ADMIN_AUTH } });
  return ((await res.json()) as { meta: { total_count: number } }).meta.total_count;
}

/** Every token revoked with an acknowledgement is refused (404); every live one still validates. */
export async function tokenBreaches(load: Load): Promise<string[]> {
  const bad: string[] = [];
  for (const t of load.tokens) {
    if (t.state === 'unknown') continue;
    const o = await load.validate(t.token, t.state === 'live' ? 200 : 404, 'final validate');
    if (!o.ok) bad.push(`${t.state} token of ${t.user}${t.how ? ` (${t.how})` : ''}: ${show(o)}`);
  }
  return bad;
}

/** One line per operation: answers by status, slowest answer; written to the test output. */
export function summary(title: string, rec: Recorder, faultAt: number, readyAt: number): string {
  const ops = new Map<string, Outcome[]>();
  for (const o of rec.outcomes) ops.set(`${o.service} ${o.op}`, [...(ops.get(`${o.service} ${o.op}`) ?? []), o]);
  const lines = [...ops].map(([op, list]) => {
    const statuses = new Map<number, number>();
    for (const o of list) statuses.set(o.status, (statuses.get(o.status) ?? 0) + 1);
    const slowest = Math.max(...list.map((o) => o.end - o.start));
    return `  ${op.padEnd(22)} ${[...statuses].map(([s, n]) => `${s || 'no answer'}×${n}`).join(' ')}  slowest ${slowest} ms`;
  });
  const rec1 = (['api', 'gateway'] as const)
    .map((s) => `${s} ${recovery(rec, s, readyAt, Infinity).firstSuccessMs} ms`)
    .join(', ');
  const slow = rec.outcomes
    .filter((o) => o.end - o.start > 2000)
    .slice(0, 10)
    .map(
      (o) =>
        `  slow: ${o.service} ${o.op} ${o.status || 'no answer'} in ${o.end - o.start} ms, started ${o.start - faultAt} ms after the fault`,
    );
  return `${title}: dependency back ${readyAt - faultAt} ms after the fault; first success after it: ${rec1}\n${[...lines, ...slow].join('\n')}\n`;
}
