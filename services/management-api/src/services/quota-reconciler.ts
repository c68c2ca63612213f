import {
  enforceablePart,
  quotaDialect,
  quotaHeaders,
  quotasFromHeaders,
  quotasJson,
  sameQuotas,
  unenforceableQuotas,
  type Quotas,
  type QuotaDialect,
  type SwiftQuotaInfo,
} from '@cairn/domain';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { QUOTA_RECONCILER_ACTOR, recordAudit } from '../repositories/audit';
import { listAllClusters } from '../repositories/clusters';
import {
  appliedQuotas,
  clearClusterErrors,
  markPendingFailed,
  pendingQuotas,
  putSwiftInfo,
  recordQuotaOutcomes,
  type QuotaOutcome,
  type QuotaWork,
} from '../repositories/quotas';
import { userUri } from '../resources/uris';
import { onQuotaChange } from './quota-wake';
import { QuotaLeadership } from './quota-leadership';
import { accountFailure, SwiftReseller, SwiftUnreachable, type ResellerCredentials } from './swift-reseller';

/**
 * The quota reconciler, a controller in the Kubernetes sense: the desired quotas are in Postgres
 * (storage_users, quota_applications), it applies them to each cluster's Swift with a reseller
 * token, records the outcome per user (quota_status), and on every resync period HEADs every
 * account it manages and puts back quotas changed in Swift behind Cairn's back (an audit record
 * names each). One replica reconciles at a time (QuotaLeadership); the others wait.
 *
 * A change wakes it at once (NOTIFY on Postgres, the in-process signal on PGlite), and a short
 * poll catches anything else (a retry falling due). While a cluster's Swift is unreachable its
 * pending users say so and the cluster is retried with backoff.
 */
export interface QuotaReconcilerOptions {
  db: Knex;
  log: Logger;
  /** By cluster name. */
  credentials: Record<string, ResellerCredentials>;
  /** A direct Postgres session for the lock and LISTEN; undefined: embedded PGlite (one process). */
  sessionUrl?: string;
  resyncMs: number;
  pollMs: number;
  concurrency: number;
  timeoutMs: number;
}

const PAGE = 500;
const BACKOFF_MIN_MS = 1000;
const BACKOFF_MAX_MS = 60_000;
/** Per-user retries (a deleted account not yet reaped, a 5xx): doubling, at most five minutes. */
const userRetryMs = (attempts: number) => Math.min(BACKOFF_MIN_MS * 2 ** Math.min(attempts, 20), 300_000);

interface ClusterState {
  reseller: SwiftReseller;
  info: (SwiftQuotaInfo & { readAt: number }) | null;
  lastResync: number;
  backoffMs: number;
  retryAt: number;
  /** The cluster-wide error pending users show now, to clear once it is over. */
  error: string | null;
}

export class QuotaReconciler {
  private readonly states = new Map<number, ClusterState>();
  private readonly leadership: QuotaLeadership;
  private wake: (() => void) | null = null;
  private woken = false;
  private stopped = false;
  private loop: Promise<void> | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly o: QuotaReconcilerOptions) {
    this.leadership = new QuotaLeadership(o.sessionUrl, o.log, () => this.poke());
  }

  /** Whether this replica leads (applies quotas) now. */
  get isLeader(): boolean {
    return this.leadership.isLeader && !this.stopped;
  }

  start(): void {
    this.unsubscribe = onQuotaChange(this.o.db, () => this.poke());
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.poke();
    await this.loop;
    await this.leadership.release();
  }

  /** Starts a pass now (or right after the one running). */
  poke(): void {
    this.woken = true;
    this.wake?.();
  }

  private async sleep(ms: number): Promise<void> {
    if (this.woken || this.stopped) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wake = null;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.woken = false;
      try {
        if (await this.leadership.lead()) await this.pass();
      } catch (err) {
        this.o.log.warn({ err }, 'quota reconcile pass failed; retried at the next poll');
      }
      await this.sleep(this.o.pollMs);
    }
  }

  /** One pass over every cluster. */
  async pass(): Promise<void> {
    const { db, credentials } = this.o;
    for (const cluster of await listAllClusters(db)) {
      if (this.stopped || !this.leadership.isLeader) return;
      const creds = credentials[cluster.name];
      if (!creds) {
        await markPendingFailed(
          db,
          cluster.id,
          `Cairn has no reseller credentials for the cluster '${cluster.name}' (CAIRN_QUOTA_CREDENTIALS), so nothing applies its quotas.`,
        );
        continue;
      }
      let state = this.states.get(cluster.id);
      if (!state) {
        state = {
          reseller: new SwiftReseller(cluster.authUrl, cluster.storageUrl, creds, this.o.timeoutMs),
          info: null,
          lastResync: 0,
          backoffMs: 0,
          retryAt: 0,
          error: null,
        };
        this.states.set(cluster.id, state);
      }
      if (Date.now() < state.retryAt) continue;
      try {
        await this.reconcileCluster(cluster.id, state);
        if (state.error) await clearClusterErrors(db, cluster.id, state.error);
        state.error = null;
        state.backoffMs = 0;
      } catch (e) {
        if (!(e instanceof SwiftUnreachable)) throw e;
        state.backoffMs = Math.min(Math.max(state.backoffMs * 2, BACKOFF_MIN_MS), BACKOFF_MAX_MS);
        state.retryAt = Date.now() + state.backoffMs;
        const error = e.message.replace(/\.$/, '; Cairn retries with backoff.');
        if (state.error && state.error !== error) await clearClusterErrors(db, cluster.id, state.error);
        state.error = error;
        await markPendingFailed(db, cluster.id, error);
        this.o.log.warn(
          { cluster: cluster.name, retryInMs: state.backoffMs, reason: e.message },
          'quota reconciler cannot reach the cluster',
        );
      }
    }
  }

  private async reconcileCluster(clusterId: number, state: ClusterState): Promise<void> {
    const now = Date.now();
    const resyncDue = now - state.lastResync >= this.o.resyncMs;
    // /info at the first pass and every resync period: an upgraded Swift is noticed without a restart.
    if (!state.info || resyncDue) {
      const info = await state.reseller.info();
      await putSwiftInfo(this.o.db, clusterId, info);
      state.info = { ...info, readAt: now };
    }
    const dialect = quotaDialect(state.info);
    if (dialect === null) {
      await markPendingFailed(
        this.o.db,
        clusterId,
        'Not supported by this Swift: its proxy does not run the account_quotas middleware (/info has no account_quotas); add it after the auth middleware.',
      );
      return;
    }
    await this.applyPending(clusterId, state, dialect);
    if (resyncDue) {
      await this.repairDrift(clusterId, state, dialect);
      state.lastResync = now;
    }
  }

  /**
   * Runs `work` over `items`, `concurrency` at a time, stopping at the first SwiftUnreachable (rethrown once all have
   * settled).
   */
  private async pool<T, R>(items: T[], work: (item: T) => Promise<R>): Promise<R[]> {
    const results: R[] = [];
    let next = 0;
    let unreachable: unknown = null;
    const worker = async () => {
      while (next < items.length && unreachable === null && !this.stopped) {
        const item = items[next++]!;
        try {
          results.push(await work(item));
        } catch (e) {
          if (e instanceof SwiftUnreachable) unreachable = e;
          else throw e;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.o.concurrency, items.length) }, worker));
    if (unreachable !== null) {
      (unreachable as { partial?: R[] }).partial = results;
      throw unreachable;
    }
    return results;
  }

  private async applyPending(clusterId: number, state: ClusterState, dialect: QuotaDialect): Promise<void> {
    let after = '0';
    for (;;) {
      const page = await pendingQuotas(this.o.db, clusterId, after, PAGE);
      if (page.length === 0 || this.stopped) return;
      after = page.at(-1)!.userId;
      try {
        await recordQuotaOutcomes(this.o.db, await this.pool(page, (w) => this.apply(w, state, dialect)));
      } catch (e) {
        // What was applied before Swift went away is recorded; the rest stays pending.
        await recordQuotaOutcomes(this.o.db, ((e as { partial?: QuotaOutcome[] }).partial ?? []) as QuotaOutcome[]);
        throw e;
      }
    }
  }

  /** POSTs the account's quotas; creates the account (PUT) when Swift says it does not exist. */
  private async send(
    w: Pick<QuotaWork, 'username' | 'quotas'>,
    state: ClusterState,
    dialect: QuotaDialect,
  ): Promise<string | null> {
    const headers = quotaHeaders(w.quotas, dialect, state.info!.policies);
    let res = await state.reseller.account('POST', w.username, headers);
    if (res.status === 404 && res.headers.get('x-account-status')?.toLowerCase() !== 'deleted') {
      res = await state.reseller.account('PUT', w.username, headers);
    }
    return res.status >= 200 && res.status < 300
      ? null
      : accountFailure(res, w.username, res.status === 405 ? 'PUT' : 'POST', state.reseller.user);
  }

  private async apply(w: QuotaWork, state: ClusterState, dialect: QuotaDialect): Promise<QuotaOutcome> {
    const refused = unenforceableQuotas(w.quotas, state.info!);
    // Waits for the next /info read: an upgraded Swift lifts it.
    if (refused)
      return {
        userId: w.userId,
        version: w.version,
        ok: false,
        error: `Not supported by this Swift: ${refused}`,
        retryInMs: this.o.resyncMs,
      };
    const failure = await this.send(w, state, dialect);
    return failure === null
      ? { userId: w.userId, version: w.version, ok: true }
      : { userId: w.userId, version: w.version, ok: false, error: failure, retryInMs: userRetryMs(w.attempts) };
  }

  /** HEADs every applied account; quotas that differ from the desired ones are put back and audited. */
  private async repairDrift(clusterId: number, state: ClusterState, dialect: QuotaDialect): Promise<void> {
    let after = '0';
    let repaired = 0;
    for (;;) {
      const page = await appliedQuotas(this.o.db, clusterId, after, PAGE);
      if (page.length === 0 || this.stopped) break;
      after = page.at(-1)!.userId;
      const drifted = (await this.pool(page, (w) => this.check(w, state, dialect))).filter(
        (d): d is Drift => d !== null,
      );
      for (const d of drifted) {
        const failure = await this.send(d.work, state, dialect);
        if (failure !== null) {
          this.o.log.warn(
            { user: d.work.username, reason: failure },
            'quota drift found but not repaired; retried at the next resync',
          );
          continue;
        }
        await this.o.db.transaction(async (trx) => {
          await recordQuotaOutcomes(trx, [{ userId: d.work.userId, version: d.work.version, ok: true }]);
          await recordAudit(trx, QUOTA_RECONCILER_ACTOR, {
            action: 'repair_quota_drift',
            target: { type: 'users', id: d.work.userId, name: d.work.username, uri: userUri(d.work.userId) },
            before: quotasJson(d.found),
            after: quotasJson(d.wanted),
          });
        });
        repaired++;
      }
    }
    if (repaired) this.o.log.info({ clusterId, repaired }, 'quota drift repaired');
  }

  private async check(w: QuotaWork, state: ClusterState, dialect: QuotaDialect): Promise<Drift | null> {
    const res = await state.reseller.account('HEAD', w.username);
    const wanted = enforceablePart(w.quotas, dialect);
    if (res.status === 404)
      return { work: w, found: { bytes: null, count: null, bytesPolicy: null, countPolicy: null }, wanted };
    if (res.status < 200 || res.status >= 300) return null;
    const found = quotasFromHeaders((name) => res.headers.get(name), dialect, state.info!.policies);
    return sameQuotas(found, wanted) ? null : { work: w, found, wanted };
  }
}

interface Drift {
  work: QuotaWork;
  found: Quotas;
  wanted: Quotas;
}
