import { CHANGE_LOG_COLUMNS, TABLES, type ChangeLogRow } from '@cairn/contract';
import type { Knex } from 'knex';
import { Client } from 'pg';
import type { Logger } from 'pino';
import type { S3CredentialDirectory } from '../s3/s3-credentials';
import type { ServedCluster } from './served-cluster';
import type { UserDirectory } from './users';

/** How often the change log and the heartbeat are read (also sooner: every login's fence reads them). */
export const CHANGE_LOG_POLL_MS = 200;
/** A poll that has not answered within this means the standby is lost (logins then read it afresh). */
const POLL_TIMEOUT_MS = 1000;
/** Rows read per query; a full batch is followed at once by the next. */
const BATCH = 1000;
/**
 * How long a missing sequence number is looked for (see gaps below). Gaps are rolled-back
 * transactions, or ones that committed out of order and show up within milliseconds.
 */
const GAP_WAIT_MS = 10_000;
/** More missing numbers at once than this (a sequence jump): forget everything rather than track them. */
const MAX_GAPS = 1000;
/** After connecting, the last rows read again: a transaction numbered below the newest may still commit. */
const LOOKBACK = 64;
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 2000;

/** What to do once the copy is older than the limit (CAIRN_STANDBY_STALE). */
export type StalePolicy = 'refuse' | 'serve';

const COLUMNS = CHANGE_LOG_COLUMNS.join(', ');

/** Whether `db` is a hot standby (in recovery): then the gateway follows its change log. */
export async function readsStandby(db: Knex): Promise<boolean> {
  const { rows } = (await db.raw('SELECT pg_is_in_recovery() AS standby')) as { rows: Array<{ standby: boolean }> };
  return rows[0]?.standby === true;
}

/**
 * Follows the change log on the database the gateway reads, for a gateway on a hot standby where
 * NOTIFY never arrives (migration 20261127150000_change_log): the rows the primary's triggers
 * wrote in the same transactions as the changes, replayed here with them. Each row read drops the
 * rows it names from the user and S3 credential directories (and re-reads the served cluster's).
 *
 * The fence. A login may use a remembered user row only once every change the standby had
 * replayed when the login arrived has been applied: its fence is one read of the log, sent after
 * the login arrived (logins of the same turn of the event loop share it). Knowledge comes only
 * from the standby itself, so a row re-read after a change was heard can never predate it.
 *
 * Gaps. Sequence numbers are taken in trigger order, commits land in another: number 11 can be
 * visible before number 10. A number skipped over is looked for again at every poll for
 * GAP_WAIT_MS (a rollback leaves it missing for ever); one that never came forgets everything.
 *
 * The copy's age. Every poll also reads the heartbeat the management API writes on the primary
 * every second: now() minus it on the standby bounds how far behind the copy is (every change
 * committed before it has been replayed). Between polls, and while the standby cannot be read,
 * the age grows with the clock. Past `maxLagMs` the copy is stale: `stale` is true, and the gateway
 * refuses or serves as configured (http/standby-gate.ts). Once it is fresh again every remembered
 * row is forgotten, in case the change log was pruned past rows this gateway never read.
 */
export class ChangeLogFeed {
  private client?: Client;
  private closed = false;
  private retryMs = RETRY_MIN_MS;
  private retryTimer?: NodeJS.Timeout;
  private pollTimer?: NodeJS.Timeout;
  private last = 0;
  /** Missing sequence numbers below `last`, with when each was first missed. */
  private readonly gaps = new Map<number, number>();
  private nextPoll?: { promise: Promise<boolean>; release: (passed: boolean) => void };
  private pollInFlight = false;
  /** Whether the database read is in recovery (a standby); unknown until the first poll. */
  private standby?: boolean;
  /** The copy's age at the last successful poll, when that was, and the heartbeat's time (primary's clock, ms). */
  private measured?: { ageMs: number; at: number; beatMs: number };
  private wasStale = false;
  /** Gives up the current connection (and reconnects). */
  private drop?: (e?: Error) => void;

  constructor(
    private readonly connectionString: string,
    private readonly clusterId: number,
    private readonly users: UserDirectory,
    private readonly log: Logger,
    private readonly options: {
      maxLagMs: number;
      cluster?: ServedCluster;
      s3?: S3CredentialDirectory;
      pollMs?: number;
      now?: () => number;
    },
  ) {}

  /** Starts following in the background; resolves once the first attempt has succeeded or failed. */
  start(): Promise<void> {
    return this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.pollTimer);
    this.users.follow();
    this.options.s3?.follow();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  /** Whether the database read is a standby (true), the primary (false), or not known yet (undefined). */
  get isStandby(): boolean | undefined {
    return this.standby;
  }

  /** How old the copy may be, in ms: 0 on the primary, unbounded before the first poll. */
  get lagMs(): number {
    if (this.standby === false) return 0;
    if (!this.measured) return Number.POSITIVE_INFINITY;
    return this.measured.ageMs + Math.max(0, this.now() - this.measured.at);
  }

  /**
   * The primary's time (ms) before which every commit has been replayed where the gateway reads:
   * the last heartbeat seen there (0 before the first). On the primary itself, now.
   */
  get replayedUpTo(): number {
    if (this.standby === false) return this.now();
    return this.measured?.beatMs ?? 0;
  }

  /** True while the copy may be older than the configured limit. */
  get stale(): boolean {
    return this.lagMs > this.options.maxLagMs;
  }

  get maxLagMs(): number {
    return this.options.maxLagMs;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private async connect(): Promise<void> {
    const client = new Client({
      connectionString: this.connectionString,
      application_name: 'cairn-auth-gateway-changes',
      keepAlive: true,
    });
    this.client = client;
    let lost = false;
    const onLost = (e?: Error) => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = undefined;
      clearInterval(this.pollTimer);
      this.users.follow();
      this.options.s3?.follow();
      if (this.closed) return;
      this.options.cluster?.follow(false);
      this.log.warn({ err: e?.message }, 'change log feed lost: logins read users from the database until it is back');
      client.end().catch(() => undefined);
      this.retryTimer = setTimeout(() => void this.connect(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    };
    this.drop = onLost;
    client.on('error', onLost);
    client.on('end', () => onLost());
    try {
      await client.connect();
      const { rows } = await client.query<{ max: string | null }>(`SELECT max(seq) AS max FROM ${TABLES.changeLog}`);
      if (this.closed || lost) return;
      this.last = Math.max(0, Number(rows[0]?.max ?? 0) - LOOKBACK);
      this.gaps.clear();
      if (!(await this.pollOnce(client))) throw new Error('first read of the change log failed');
      if (this.closed || lost) return;
      this.retryMs = RETRY_MIN_MS;
      this.users.follow(() => this.poll(client));
      this.options.s3?.follow(() => this.poll(client));
      this.options.cluster?.follow(true);
      this.pollTimer = setInterval(() => void this.poll(client), this.options.pollMs ?? CHANGE_LOG_POLL_MS);
      this.pollTimer.unref();
    } catch (e) {
      onLost(e as Error);
    }
  }

  /**
   * True once the log has been read after this call, and everything in it applied; false if that
   * cannot be known now. One read at a time is in flight; callers arriving meanwhile share the next.
   */
  private poll(client: Client): Promise<boolean> {
    if (client !== this.client) return Promise.resolve(false);
    if (!this.nextPoll) {
      let release!: (passed: boolean) => void;
      const promise = new Promise<boolean>((resolve) => (release = resolve));
      this.nextPoll = { promise, release };
      if (!this.pollInFlight) setImmediate(() => void this.sendPoll(client));
    }
    return this.nextPoll.promise;
  }

  private async sendPoll(client: Client): Promise<void> {
    const waiting = this.nextPoll;
    if (!waiting) return;
    this.nextPoll = undefined;
    this.pollInFlight = true;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), POLL_TIMEOUT_MS);
    });
    const passed = await Promise.race([this.pollOnce(client), timedOut]);
    clearTimeout(timer);
    this.pollInFlight = false;
    const live = client === this.client;
    waiting.release(passed && live && this.users.isFollowing);
    if (!passed && live)
      this.drop?.(new Error(`the change log could not be read (or not within ${POLL_TIMEOUT_MS} ms)`));
    if (this.nextPoll && client === this.client) void this.sendPoll(client);
  }

  /** One read of the heartbeat, then of the log (in that order: the log is then at least as new). */
  private async pollOnce(client: Client): Promise<boolean> {
    try {
      const startedAt = this.now();
      const beat = await client.query<{ standby: boolean; age_ms: number | null; beat_ms: number | null }>(
        `SELECT pg_is_in_recovery() AS standby, (extract(epoch FROM now() - h.beat_at) * 1000)::float8 AS age_ms, (extract(epoch FROM h.beat_at) * 1000)::float8 AS beat_ms
           FROM (SELECT 1) one LEFT JOIN ${TABLES.heartbeat} h ON h.id = 1`,
      );
      for (;;) {
        const gaps = [...this.gaps.keys()];
        const { rows } = await client.query<Pick<ChangeLogRow, 'seq' | 'kind' | 'cluster_id' | 'key'>>(
          `SELECT ${COLUMNS} FROM ${TABLES.changeLog} WHERE seq > $1 OR seq = ANY($2::bigint[]) ORDER BY seq LIMIT ${BATCH}`,
          [this.last, gaps],
        );
        if (client !== this.client) return false;
        for (const row of rows) this.take(row);
        if (rows.length < BATCH) break;
      }
      this.expireGaps();
      const row = beat.rows[0];
      this.standby = row?.standby === true;
      // Measured from before the query: the copy was at least this fresh then.
      this.measured = {
        ageMs: Math.max(0, row?.age_ms ?? Number.POSITIVE_INFINITY),
        at: startedAt,
        beatMs: row?.beat_ms ?? 0,
      };
      this.noteStaleness();
      return true;
    } catch (e) {
      if (client === this.client) this.log.debug({ err: (e as Error).message }, 'change log read failed');
      return false;
    }
  }

  private take(row: Pick<ChangeLogRow, 'seq' | 'kind' | 'cluster_id' | 'key'>): void {
    const seq = Number(row.seq);
    if (this.gaps.delete(seq)) {
      this.apply(row);
      return;
    }
    if (seq <= this.last) return;
    if (seq - this.last - 1 > MAX_GAPS) {
      this.forgetAll();
    } else {
      const at = this.now();
      for (let missing = this.last + 1; missing < seq; missing++) this.gaps.set(missing, at);
    }
    this.last = seq;
    this.apply(row);
  }

  private expireGaps(): void {
    const cutoff = this.now() - GAP_WAIT_MS;
    let expired = false;
    for (const [seq, at] of this.gaps) {
      if (at >= cutoff) continue;
      this.gaps.delete(seq);
      expired = true;
    }
    // A number never seen: a rollback, or a change not heard. Be safe.
    if (expired) this.forgetAll();
  }

  private apply(row: Pick<ChangeLogRow, 'kind' | 'cluster_id' | 'key'>): void {
    const { s3, cluster } = this.options;
    switch (row.kind) {
      case 'user':
        if (row.cluster_id !== null && row.cluster_id !== this.clusterId) return;
        if (row.key === null || row.cluster_id === null) return this.forgetAll();
        this.users.forget(row.key);
        s3?.forgetUser(row.key);
        return;
      case 's3_credential':
        if (row.key === null) s3?.forgetAll();
        else s3?.forget(row.key);
        return;
      case 'cluster':
        if (cluster && (row.cluster_id === null || row.cluster_id === cluster.id)) cluster.changed();
        return;
      default:
        // A kind this release does not know: forget everything rather than guess.
        this.forgetAll();
    }
  }

  private forgetAll(): void {
    this.users.forgetAll();
    this.options.s3?.forgetAll();
  }

  private noteStaleness(): void {
    const stale = this.stale;
    if (stale === this.wasStale) return;
    this.wasStale = stale;
    if (stale) {
      this.log.warn(
        { lagMs: Math.round(this.lagMs), maxLagMs: this.options.maxLagMs },
        'the standby this gateway reads is behind the primary by more than CAIRN_STANDBY_MAX_LAG',
      );
    } else {
      // Rows the log named while this gateway could not keep up may have been pruned unread.
      this.forgetAll();
      this.log.info({ lagMs: Math.round(this.lagMs) }, 'the standby this gateway reads has caught up');
    }
  }
}
