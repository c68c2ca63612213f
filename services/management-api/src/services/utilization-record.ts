import Joi from 'joi';
import type { Knex } from 'knex';
import {
  type Cluster,
  DAY_MS,
  errors,
  escapeHtml,
  floorHour,
  formatUtc,
  HOUR_MS,
  parseUtc,
  swiftAccountSchema,
  classField,
  TRANSFER_CLASSES,
  TRANSFER_DETAIL_FIELD_NAMES,
  type TransferDetailField,
  validate,
} from '@cairn/domain';
import { recordAudit } from '../repositories/audit';
import { addStorageCoverage, recordCollectorRun } from '../repositories/monitoring';
import { listPolicies } from '../repositories/devices';
import { ensureHourlyPartitions } from '../repositories/utilization-partitions';
import * as repo from '../repositories/utilization';
import { invalidateRollups, TRANSFER_HOUR_MAX } from '../repositories/utilization-rollups';
import { TOTAL_POLICY, type StorageRow, type TransferRow, type UtilizationKind } from '../repositories/utilization';
import { requireWriterOn } from './policy';
import { Slots } from './slots';
import { auditActorOf, type Acting } from './context';
import type { UtilizationSettings } from './utilization';

/**
 * Collector writes: storage samples and transfer batches. Each checks that the operator may write
 * to the cluster before the body is even read (the route passes a function that reads it: a
 * reader gets 403 whatever it sends), validates the whole body before touching anything, and
 * writes in one transaction with its audit record.
 */

/** Samples or records per request: a collector sends a round in several requests. */
export const MAX_WRITE_ROWS = 20_000;
/** Unknown policy indexes a 400 names one by one (a round may hold thousands). */
const MAX_UNKNOWN_SHOWN = 10;
const count = Joi.number().integer().min(0).max(Number.MAX_SAFE_INTEGER).required();
const account = swiftAccountSchema.required();
const utc = Joi.string().max(40).required();

export const storageSchema = Joi.object({
  interval: Joi.number().integer().min(60).max(3600).default(3600),
  sampled_at: utc,
  samples: Joi.array()
    .max(MAX_WRITE_ROWS)
    .items(
      Joi.object({
        account,
        bytes_used: count,
        object_count: count,
        container_count: count,
        policies: Joi.array()
          .max(64)
          .items(
            Joi.object({
              index: Joi.number().integer().min(0).max(32767),
              name: Joi.string().max(255),
              bytes_used: count,
              object_count: count,
              container_count: count,
            }).xor('index', 'name'),
          )
          .default([]),
      }),
    )
    .required(),
});

interface StorageInput {
  interval: number;
  sampled_at: string;
  samples: Array<{
    account: string;
    bytes_used: number;
    object_count: number;
    container_count: number;
    policies: Array<{
      index?: number;
      name?: string;
      bytes_used: number;
      object_count: number;
      container_count: number;
    }>;
  }>;
}

/**
 * The times a collector may write now: from the start of the first hour the hourly retention still
 * keeps (a day's margin, so that maintenance does not drop a partition under a write) to 15 minutes
 * ahead of this clock (collectors' clocks drift).
 */
export function writeWindow(settings: UtilizationSettings): { oldest: Date; latest: Date } {
  const now = settings.now().getTime();
  return {
    oldest: new Date(floorHour(now - settings.retention.hourlyDays * DAY_MS) + DAY_MS),
    latest: new Date(now + 15 * 60_000),
  };
}

function checkWriteTime(label: string, raw: string, settings: UtilizationSettings): Date {
  const t = parseUtc(raw);
  if (!t) throw errors.invalidInput(`'${label}' must be an ISO 8601 UTC date-time, such as 2026-11-24T22:05:00Z.`);
  const { oldest, latest } = writeWindow(settings);
  if (t.getTime() < oldest.getTime())
    throw errors.invalidInput(
      `'${label}' (${formatUtc(t)}) is older than the hourly retention allows (${formatUtc(oldest)}).`,
    );
  if (t.getTime() > latest.getTime())
    throw errors.invalidInput(`'${label}' (${formatUtc(t)}) is in the future; check the collector's clock.`);
  return t;
}

/**
 * checkWriteTime for the records of one batch: a batch of 20,000 records names a few dozen hours,
 * each parsed and checked once. A refusal names the field 'hour' (checkTransferRecord puts the
 * record's position in front).
 */
function recordHours(settings: UtilizationSettings): (raw: string) => Date {
  const seen = new Map<string, Date | Error>();
  return (raw) => {
    let checked = seen.get(raw);
    if (checked === undefined) {
      try {
        checked = checkWriteTime('hour', raw, settings);
      } catch (e) {
        checked = e as Error;
      }
      seen.set(raw, checked);
    }
    if (checked instanceof Error) throw checked;
    return checked;
  };
}

/** Writes carry up to 16 MB each, held while they are stored: two at a time per process (see slots.ts). */
const writeSlots = new Slots(2);

export interface WriteResult {
  accepted: number;
  duplicate: boolean;
  /** Transfer only: records (and the requests they sum) for accounts the cluster never had, not billed. */
  unattributed?: { records: number; requests: number };
}

/** A transfer record left out of its batch: its position in `records` and why. */
export interface RefusedRecord {
  index: number;
  reason: string;
}

/** `refused` and `refused_count` only when records were refused: a clean batch answers as it always has. */
export interface TransferWriteResult extends WriteResult {
  refused?: RefusedRecord[];
  refused_count?: number;
}

/** A round (or part of one) of account HEADs. Each hour keeps its maxima; re-sent samples count once. */
export async function recordStorage(
  db: Knex,
  acting: Acting,
  cluster: Cluster,
  bodyOf: () => Promise<unknown>,
  settings: UtilizationSettings,
): Promise<WriteResult> {
  requireWriterOn(acting.operator, cluster.id);
  return writeSlots.run(() => storeStorage(db, acting, cluster, bodyOf, settings));
}

async function storeStorage(
  db: Knex,
  acting: Acting,
  cluster: Cluster,
  bodyOf: () => Promise<unknown>,
  settings: UtilizationSettings,
): Promise<WriteResult> {
  const input = validate<StorageInput>(storageSchema, await bodyOf());
  if (3600 % input.interval !== 0)
    throw errors.invalidInput(`'interval' must divide an hour (3600 seconds) evenly; ${input.interval} does not.`);
  const at = checkWriteTime('sampled_at', input.sampled_at, settings).getTime();
  const hourMs = floorHour(at);
  const hour = new Date(hourMs);
  const slotCount = 3600 / input.interval;
  const slots = 1n << BigInt(Math.floor((at - hourMs) / (input.interval * 1000)));
  // Every policy a sample names, by name or by index, must be one the cluster's device report lists.
  const policies = input.samples.some((s) => s.policies.length > 0) ? await listPolicies(db, cluster.id) : [];
  const byName = new Map(policies.map((p) => [p.name.toLowerCase(), p.index]));
  const knownIndexes = new Set(policies.map((p) => p.index));
  const unknown = new Set<string>();
  const unknownIndexes: string[] = [];
  const rows = new Map<string, StorageRow>();
  const add = (r: StorageRow) => {
    const key = `${r.policyIndex}\u0000${r.account}`;
    const prev = rows.get(key);
    rows.set(
      key,
      prev
        ? {
            ...r,
            bytesUsed: Math.max(prev.bytesUsed, r.bytesUsed),
            objectCount: Math.max(prev.objectCount, r.objectCount),
            containerCount: Math.max(prev.containerCount, r.containerCount),
          }
        : r,
    );
  };
  input.samples.forEach((s, i) => {
    add({
      policyIndex: TOTAL_POLICY,
      account: s.account,
      hour,
      bytesUsed: s.bytes_used,
      objectCount: s.object_count,
      containerCount: s.container_count,
      slots,
      slotCount,
    });
    s.policies.forEach((p, j) => {
      if (p.index !== undefined && !knownIndexes.has(p.index)) {
        unknownIndexes.push(`samples[${i}].policies[${j}].index ${p.index}`);
        return;
      }
      // Swift matches policy names without regard to case (and title-cases them in headers); a
      // device report never holds two names that differ only in case, so the match is unique.
      const index = p.index ?? byName.get(p.name!.toLowerCase());
      if (index === undefined) {
        unknown.add(p.name!);
        return;
      }
      add({
        policyIndex: index,
        account: s.account,
        hour,
        bytesUsed: p.bytes_used,
        objectCount: p.object_count,
        containerCount: p.container_count,
        slots,
        slotCount,
      });
    });
  });
  if (unknown.size > 0 || unknownIndexes.length > 0) {
    const problems: string[] = [];
    if (unknown.size > 0)
      problems.push(
        `Unknown storage policy name(s) ${[...unknown].map((n) => `'${escapeHtml(n)}'`).join(', ')} for cluster ${cluster.id}.`,
      );
    if (unknownIndexes.length > 0) {
      const shown = unknownIndexes.slice(0, MAX_UNKNOWN_SHOWN).join('; ');
      const more =
        unknownIndexes.length > MAX_UNKNOWN_SHOWN ? `; and ${unknownIndexes.length - MAX_UNKNOWN_SHOWN} more` : '';
      const has =
        policies.length > 0
          ? `its policies are ${policies.map((p) => p.index).join(', ')}`
          : 'it has no storage policies reported';
      problems.push(`Unknown storage policy index(es) for cluster ${cluster.id} (${has}): ${shown}${more}.`);
    }
    throw errors.invalidInput(
      `${problems.join(' ')} Report the cluster's policies first (PUT .../devices/, as 'cairn capacity collect' does).`,
    );
  }
  await ensureHourlyPartitions(db, [hourMs]);
  await db.transaction(async (trx) => {
    await repo.upsertStorage(trx, cluster.id, [...rows.values()]);
    await invalidateRollups(trx, cluster.id, [hourMs]);
    await repo.rememberAccounts(trx, cluster.id, [...new Set(input.samples.map((s) => s.account))]);
    await repo.rememberPolicies(
      trx,
      cluster.id,
      [...new Set([...rows.values()].map((r) => r.policyIndex))].filter((p) => p !== TOTAL_POLICY),
    );
    await recordAudit(trx, auditActorOf(acting), {
      action: 'record_utilization',
      target: utilizationTarget(cluster, 'storage'),
      before: null,
      after: { kind: 'storage', sampled_at: new Date(at).toISOString(), samples: input.samples.length },
    });
  });
  // For monitoring, after the commit: these rows are shared by every post of the cluster, and
  // holding their locks for a whole transaction would serialise concurrent batches.
  await addStorageCoverage(db, cluster.id, hour, slots, slotCount);
  await recordCollectorRun(db, cluster.id, 'storage');
  return { accepted: input.samples.length, duplicate: false };
}

/**
 * A transfer batch is checked in two steps: the envelope whole (a bad one is refused with a 400),
 * then each record on its own: a bad record is left out and named in the answer, and the batch's
 * other records are counted (a log batch holds thousands of accounts' requests; one line should not
 * cost the others theirs).
 */
export const transferSchema = Joi.object({
  batch_id: Joi.string()
    .min(8)
    .max(128)
    .pattern(/^[\w.:-]+$/)
    .required(),
  covered: Joi.object({ start: utc, end: utc }),
  records: Joi.array().max(MAX_WRITE_ROWS).items(Joi.any()).required(),
});
export const transferRecordSchema = Joi.object({
  account,
  policy_index: Joi.number().integer().min(0).max(32767).allow(null).default(null),
  hour: utc,
  bytes_in: count,
  bytes_out: count,
  req_count: count,
  // Sent by collectors that read classes (older ones send totals only: 0, "not known").
  ...Object.fromEntries(TRANSFER_DETAIL_FIELD_NAMES.map((f) => [f, count.optional().default(0)])),
});
const RECORD_FIELD = new RegExp(
  `'(${['account', 'policy_index', 'hour', 'bytes_in', 'bytes_out', 'req_count', ...TRANSFER_DETAIL_FIELD_NAMES].join('|')})'`,
  'g',
);
/** Each share or class count is part of a total, and the classes partition req_count. */
const PART_OF: ReadonlyArray<readonly [TransferDetailField, 'bytes_in' | 'bytes_out' | 'req_count']> = [
  ['s3_bytes_in', 'bytes_in'],
  ['s3_bytes_out', 'bytes_out'],
  ['s3_req_count', 'req_count'],
  ['internal_bytes_in', 'bytes_in'],
  ['internal_bytes_out', 'bytes_out'],
  ['internal_req_count', 'req_count'],
  ['req_errors', 'req_count'],
];
/** Refused records an answer names one by one (a batch may hold 20,000); `refused_count` counts them all. */
const MAX_REFUSED_SHOWN = 100;

interface TransferInput {
  batch_id: string;
  covered?: { start: string; end: string };
  records: unknown[];
}
interface TransferRecordInput {
  account: string;
  policy_index: number | null;
  hour: string;
  bytes_in: number;
  bytes_out: number;
  req_count: number;
}
type TransferRecordFull = TransferRecordInput & Record<TransferDetailField, number>;

/** Why a record's detail cannot be a breakdown of its totals; null when it can. */
function detailProblem(r: TransferRecordFull, label: string): string | null {
  for (const [part, total] of PART_OF)
    if (r[part] > r[total]) return `'${label}.${part}' (${r[part]}) must not exceed '${label}.${total}' (${r[total]}).`;
  const classes = TRANSFER_CLASSES.reduce((n, c) => n + r[classField(c)], 0);
  if (classes > r.req_count)
    return `The request classes of '${label}' add up to ${classes}, more than its req_count (${r.req_count}).`;
  return null;
}

/** Adds two counts, saturating where an hour's sum stops (see TRANSFER_HOUR_MAX). */
const addCapped = (a: number, b: number): number => Math.min(TRANSFER_HOUR_MAX, a + b);

/** One record, checked alone: its hour, or why it is refused. */
function checkTransferRecord(
  raw: unknown,
  i: number,
  knownIndexes: ReadonlySet<number>,
  hourOf: (raw: string) => Date,
): { record: TransferRecordFull; hour: Date } | { reason: string } {
  const label = `records[${i}]`;
  try {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
      return { reason: `'${label}' must be an object.` };
    const record = validate<TransferRecordFull>(transferRecordSchema, raw);
    const problem = detailProblem(record, label);
    if (problem) return { reason: problem };
    const hour = hourOf(record.hour);
    if (hour.getTime() % HOUR_MS !== 0)
      return { reason: `'${label}.hour' (${formatUtc(hour)}) must be the start of an hour.` };
    if (record.policy_index !== null && !knownIndexes.has(record.policy_index)) {
      const has =
        knownIndexes.size > 0
          ? `its policies are ${[...knownIndexes].sort((a, b) => a - b).join(', ')}`
          : 'it has no storage policies reported';
      return {
        reason: `'${label}.policy_index' ${record.policy_index} is not a storage policy of this cluster (${has}).`,
      };
    }
    return { record, hour };
  } catch (e) {
    // validate() names a field without the record's position: name it as `records[i].field`.
    return { reason: (e as Error).message.replace(RECORD_FIELD, (_, field: string) => `'${label}.${field}'`) };
  }
}

/** Minutes [start, end) as a bit mask per hour. */
function minuteMasks(start: number, end: number): Map<number, bigint> {
  const masks = new Map<number, bigint>();
  for (let m = Math.floor(start / 60_000) * 60_000; m < end; m += 60_000) {
    const hour = floorHour(m);
    masks.set(hour, (masks.get(hour) ?? 0n) | (1n << BigInt((m - hour) / 60_000)));
  }
  return masks;
}

/**
 * A batch of access-log sums. A batch id already counted is acknowledged and ignored, so a
 * collector may re-send after a crash or a timeout without counting twice.
 */
export async function recordTransfer(
  db: Knex,
  acting: Acting,
  cluster: Cluster,
  bodyOf: () => Promise<unknown>,
  settings: UtilizationSettings,
): Promise<TransferWriteResult> {
  requireWriterOn(acting.operator, cluster.id);
  return writeSlots.run(() => storeTransfer(db, acting, cluster, bodyOf, settings));
}

async function storeTransfer(
  db: Knex,
  acting: Acting,
  cluster: Cluster,
  bodyOf: () => Promise<unknown>,
  settings: UtilizationSettings,
): Promise<TransferWriteResult> {
  const input = validate<TransferInput>(transferSchema, await bodyOf());
  let coverage = new Map<number, bigint>();
  if (input.covered) {
    const start = checkWriteTime('covered.start', input.covered.start, settings).getTime();
    const end = checkWriteTime('covered.end', input.covered.end, settings).getTime();
    if (end < start) throw errors.invalidInput("'covered.end' must not be before 'covered.start'.");
    coverage = minuteMasks(start, Math.max(end, start + 1));
  }
  const needsPolicies = input.records.some(
    (r) => r !== null && typeof r === 'object' && typeof (r as { policy_index?: unknown }).policy_index === 'number',
  );
  const knownIndexes = new Set((needsPolicies ? await listPolicies(db, cluster.id) : []).map((p) => p.index));
  const checkedRecords: Array<{
    account: string;
    reqCount: number;
    policyIndex: number;
    hour: Date;
    bytesIn: number;
    bytesOut: number;
    detail: Record<TransferDetailField, number>;
  }> = [];
  const refused: RefusedRecord[] = [];
  const hourOf = recordHours(settings);
  input.records.forEach((raw, i) => {
    const checked = checkTransferRecord(raw, i, knownIndexes, hourOf);
    if ('reason' in checked) refused.push({ index: i, reason: checked.reason });
    else {
      const { record: r, hour } = checked;
      checkedRecords.push({
        account: r.account,
        reqCount: r.req_count,
        policyIndex: r.policy_index ?? TOTAL_POLICY,
        hour,
        bytesIn: r.bytes_in,
        bytesOut: r.bytes_out,
        // The validated record holds the detail fields (joi made it, nothing else refers to it).
        detail: r,
      });
    }
  });
  // Only accounts the cluster has had a user for are billed. A log line names whatever account its
  // request asked for, refused or not: anyone can make the proxy log any name, and such a name
  // must neither be billed nor become an account the storage collector HEADs.
  const known = await repo.knownAmong(db, cluster.id, [...new Set(checkedRecords.map((r) => r.account))]);
  const strangers = checkedRecords.filter((r) => !known.has(r.account));
  const unattributed = { records: strangers.length, requests: strangers.reduce((n, r) => n + r.reqCount, 0) };
  const rows = new Map<string, TransferRow>();
  // Records of the same account, policy and hour add up (in place: a batch holds up to 20,000).
  const detailFields = TRANSFER_DETAIL_FIELD_NAMES;
  for (const r of checkedRecords) {
    if (!known.has(r.account)) continue;
    const key = `${r.policyIndex}\u0000${r.account}\u0000${r.hour.getTime()}`;
    const prev = rows.get(key);
    if (prev) {
      prev.bytesIn = addCapped(prev.bytesIn, r.bytesIn);
      prev.bytesOut = addCapped(prev.bytesOut, r.bytesOut);
      prev.reqCount = addCapped(prev.reqCount, r.reqCount);
      for (const f of detailFields) prev.detail[f] = addCapped(prev.detail[f], r.detail[f]);
      continue;
    }
    const detail = {} as Record<TransferDetailField, number>;
    for (const f of detailFields) detail[f] = r.detail[f];
    rows.set(key, {
      policyIndex: r.policyIndex,
      account: r.account,
      hour: r.hour,
      bytesIn: r.bytesIn,
      bytesOut: r.bytesOut,
      reqCount: r.reqCount,
      detail,
    });
  }
  const billed = [...rows.values()];
  await ensureHourlyPartitions(
    db,
    billed.map((r) => r.hour.getTime()),
  );
  const counted = await db.transaction(async (trx) => {
    if (!(await repo.claimTransferBatch(trx, cluster.id, input.batch_id))) return false;
    await repo.addTransfer(trx, cluster.id, billed);
    await invalidateRollups(
      trx,
      cluster.id,
      billed.map((r) => r.hour.getTime()),
    );
    await repo.addTransferCoverage(trx, cluster.id, coverage);
    await recordAudit(trx, auditActorOf(acting), {
      action: 'record_utilization',
      target: utilizationTarget(cluster, 'transfer'),
      before: null,
      after: {
        kind: 'transfer',
        batch_id: input.batch_id,
        records: input.records.length,
        refused: refused.length,
        unattributed: unattributed.records,
      },
    });
    return true;
  });
  // After the commit (see recordStorage); a re-sent batch is the collector working too.
  await recordCollectorRun(db, cluster.id, 'transfer');
  const accepted = checkedRecords.length - unattributed.records;
  const result: TransferWriteResult = { accepted: counted ? accepted : 0, duplicate: !counted, unattributed };
  return refused.length === 0
    ? result
    : { ...result, refused: refused.slice(0, MAX_REFUSED_SHOWN), refused_count: refused.length };
}

const utilizationTarget = (cluster: Cluster, kind: UtilizationKind) => ({
  type: 'clusters',
  id: cluster.id,
  name: cluster.name,
  uri: `/api/v1/clusters/${cluster.id}/utilization/${kind}/`,
});
