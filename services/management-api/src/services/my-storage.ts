import { HOUR_MS, errors, type Quotas } from '@cairn/domain';
import type { Db } from '../db/database';
import { listPolicies } from '../repositories/devices';
import { policyUsageAt, type LatestUsage } from '../repositories/quota-usage';
import { getStorageUserView } from '../repositories/storage-users';
import { storageHours, transferHours, TOTAL_POLICY } from '../repositories/utilization';
import type { LiveStorageUserSession } from './storage-user-sessions';

/** How far back "My storage" charts the account: 30 whole UTC days, today included. */
export const HISTORY_DAYS = 30;
const DAY_MS = 24 * HOUR_MS;

export interface PolicyStanding {
  index: number;
  name: string;
  /** Decimal strings; null before the account's first sample. */
  bytesUsed: string | null;
  objectCount: string | null;
  quotaBytes: string | null;
  quotaCount: string | null;
}

export interface DayFigures {
  /** The UTC day's first instant. */
  day: Date;
  /** The last sample of the day (null: none that day). */
  bytesUsed: number | null;
  objectCount: number | null;
  bytesIn: bigint;
  bytesOut: bigint;
  requests: bigint;
}

/**
 * Whom "My storage" is read for: a console session's user, or the user a gateway token belongs to
 * (services/gateway-tokens.ts); never a user the request names.
 */
export type StorageUserIdentity = Pick<LiveStorageUserSession, 'userId' | 'username' | 'clusterId' | 'clusterName'>;

/** What a storage user sees of its own account; only ever read for the session's own user. */
export interface MyStorage {
  username: string;
  clusterName: string;
  account: string;
  usage: LatestUsage | null;
  quotas: Quotas;
  policies: PolicyStanding[];
  days: DayFigures[];
}

const big = (v: number | bigint): bigint => (typeof v === 'bigint' ? v : BigInt(v));

/**
 * The account of the session's user: its latest sample against its quotas, overall and per storage
 * policy (at the same sample), and 30 days of storage (the day's last sample) and transfer (the
 * day's sums, any policy, both APIs). Everything is keyed by the signed-in user and cluster, never
 * by anything the request names, so no request can reach another account.
 */
export async function myStorage(db: Db, session: StorageUserIdentity, now: Date): Promise<MyStorage> {
  const user = await getStorageUserView(db, session.userId);
  if (!user) throw errors.unauthenticated('Your user no longer exists. Sign in again.');
  const account = `AUTH_${user.username}`;
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  const range = { from: new Date(today - (HISTORY_DAYS - 1) * DAY_MS), to: new Date(today + DAY_MS) };
  const [policies, perPolicy, stored, moved] = await Promise.all([
    listPolicies(db, user.clusterId),
    user.usage ? policyUsageAt(db, user.clusterId, account, user.usage.hour) : new Map<number, never>(),
    storageHours(db, user.clusterId, account, TOTAL_POLICY, range),
    transferHours(db, user.clusterId, account, null, range),
  ]);
  const quotaOf = (m: Record<string, string> | null, name: string): string | null => {
    if (!m) return null;
    const key = Object.keys(m).find((k) => k.toLowerCase() === name.toLowerCase());
    return key === undefined ? null : (m[key] ?? null);
  };
  const days: DayFigures[] = Array.from({ length: HISTORY_DAYS }, (_, i) => ({
    day: new Date(range.from.getTime() + i * DAY_MS),
    bytesUsed: null,
    objectCount: null,
    bytesIn: 0n,
    bytesOut: 0n,
    requests: 0n,
  }));
  const dayOf = (hour: number) => days[Math.floor((hour - range.from.getTime()) / DAY_MS)];
  // Hours come in no particular order: the day keeps its latest sampled hour.
  const latestHour = new Map<DayFigures, number>();
  for (const h of stored) {
    const d = dayOf(h.hour);
    if (!d || h.bytesUsed === null || (latestHour.get(d) ?? -1) > h.hour) continue;
    latestHour.set(d, h.hour);
    d.bytesUsed = h.bytesUsed;
    d.objectCount = h.objectCount;
  }
  for (const h of moved) {
    const d = dayOf(h.hour);
    if (!d) continue;
    d.bytesIn += big(h.bytesIn);
    d.bytesOut += big(h.bytesOut);
    d.requests += big(h.reqCount);
  }
  return {
    username: user.username,
    clusterName: session.clusterName,
    account,
    usage: user.usage,
    quotas: user.quotas,
    policies: policies.map((p) => {
      const used = perPolicy.get(p.index);
      return {
        index: p.index,
        name: p.name,
        // Sampled without this policy: it holds nothing.
        bytesUsed: user.usage ? (used?.bytesUsed ?? '0') : null,
        objectCount: user.usage ? (used?.objectCount ?? '0') : null,
        quotaBytes: quotaOf(user.quotas.bytesPolicy, p.name),
        quotaCount: quotaOf(user.quotas.countPolicy, p.name),
      };
    }),
    days,
  };
}
