import { Client, type Notification } from 'pg';
import type { Logger } from 'pino';
import {
  APPLICATION_CREDENTIAL_CHANGES_CHANNEL,
  CLUSTER_CHANGES_CHANNEL,
  parseApplicationCredentialNotice,
  parseClusterChangeNotice,
  parseS3CredentialNotice,
  parseUserChangeNotice,
  S3_CREDENTIAL_CHANGES_CHANNEL,
  USER_CHANGES_CHANNEL,
} from '@cairn/contract';
import type { ServedCluster } from './served-cluster';
import type { UserDirectory } from './users';
import type { ApplicationCredentialStore } from '../app-credentials/store';
import type { S3CredentialDirectory } from '../s3/s3-credentials';

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 2000;
/** A connection that cannot answer the fence within this is treated as lost (logins then read Postgres). */
const FENCE_TIMEOUT_MS = 1000;

/**
 * Follows `LISTEN cairn_storage_users` on a connection of its own and drops the changed users'
 * rows from the directory as each change commits. While it listens, the directory may serve
 * logins from memory, behind a fence (below); while it does not (starting, connection lost,
 * reconnecting), it may not, and everything remembered is dropped, since changes made meanwhile
 * were not heard.
 *
 * The fence. A notice reaches us some time after its change committed, and a client told "done"
 * by the management API may log in before that (measured: a login sent after a user's deletion
 * was answered succeeded). So a login first waits for a round trip on this same connection:
 * Postgres queues a notice and signals the listening backend as part of the commit, before the
 * writer hears of it, and the backend sends pending notices before it reports itself ready for the
 * next query; so when a query sent after the login arrived completes, every change committed
 * before has been heard. The query is an empty one: Postgres answers it with two short messages
 * and nothing parsed, planned or run (a `SELECT 1` is four, and costs the backend more). A login
 * sends it as it arrives, beside its failure counters' read (LoginService.login). (Changes of the
 * served cluster's row arrive on the same connection, on CLUSTER_CHANGES_CHANNEL, and are passed to
 * the ServedCluster without a fence.) Logins arriving in the same turn of the event loop share one
 * fence: far cheaper than reading each login's row (docs/benchmarks.md, auth-gateway).
 */
export class UserChangeFeed {
  private client?: Client;
  private closed = false;
  private retryMs = RETRY_MIN_MS;
  private retryTimer?: NodeJS.Timeout;
  /** The fence logins wait for that has not been sent yet, and whether one is out. */
  private nextFence?: { promise: Promise<boolean>; release: (passed: boolean) => void };
  private fenceInFlight = false;
  /** Gives up the current connection (and reconnects). */
  private drop?: (e?: Error) => void;

  constructor(
    private readonly connectionString: string,
    private readonly clusterId: number,
    private readonly users: UserDirectory,
    private readonly log: Logger,
    /** Told of changes to its row, heard on the same connection (CLUSTER_CHANGES_CHANNEL). */
    private readonly cluster?: ServedCluster,
    /** Told of S3 credential changes (S3_CREDENTIAL_CHANGES_CHANNEL) and of user changes, behind the same fence. */
    private readonly s3?: S3CredentialDirectory,
    /** Told of application credential changes (APPLICATION_CREDENTIAL_CHANGES_CHANNEL), behind the same fence. */
    private readonly appCredentials?: ApplicationCredentialStore,
  ) {}

  /** Starts listening in the background; resolves once the first attempt has succeeded or failed. */
  start(): Promise<void> {
    return this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.users.follow();
    this.s3?.follow();
    this.appCredentials?.follow();
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new Client({
      connectionString: this.connectionString,
      application_name: 'cairn-auth-gateway-listen',
      keepAlive: true,
    });
    this.client = client;
    let lost = false;
    const onLost = (e?: Error) => {
      if (lost) return;
      lost = true;
      this.users.follow();
      this.s3?.follow();
      this.appCredentials?.follow();
      if (this.closed) return;
      this.cluster?.follow(false);
      this.log.warn({ err: e?.message }, 'user change feed lost: logins read users from Postgres until it is back');
      client.end().catch(() => undefined);
      this.retryTimer = setTimeout(() => void this.connect(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    };
    this.drop = onLost;
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (n) => this.onNotice(n));
    try {
      await client.connect();
      await client.query(`LISTEN ${USER_CHANGES_CHANNEL}`);
      if (this.cluster) await client.query(`LISTEN ${CLUSTER_CHANGES_CHANNEL}`);
      if (this.s3) await client.query(`LISTEN ${S3_CREDENTIAL_CHANGES_CHANNEL}`);
      if (this.appCredentials) await client.query(`LISTEN ${APPLICATION_CREDENTIAL_CHANGES_CHANNEL}`);
      if (this.closed || lost) return;
      this.retryMs = RETRY_MIN_MS;
      this.users.follow(() => this.fence(client));
      this.s3?.follow(() => this.fence(client));
      this.appCredentials?.follow(() => this.fence(client));
      this.cluster?.follow(true);
    } catch (e) {
      onLost(e as Error);
    }
  }

  /**
   * True once every change committed before the call has been applied; false if that cannot be
   * known now. One fence at a time is in flight (a pg client runs one query at a time); callers
   * arriving meanwhile share the next one, sent as soon as it returns.
   */
  private fence(client: Client): Promise<boolean> {
    if (client !== this.client) return Promise.resolve(false);
    if (!this.nextFence) {
      let release!: (passed: boolean) => void;
      const promise = new Promise<boolean>((resolve) => (release = resolve));
      this.nextFence = { promise, release };
      // Logins of this turn of the event loop join it; then it goes, unless one is still in flight.
      if (!this.fenceInFlight) setImmediate(() => this.sendFence(client));
    }
    return this.nextFence.promise;
  }

  private sendFence(client: Client): void {
    const fence = this.nextFence;
    if (!fence) return;
    this.nextFence = undefined;
    this.fenceInFlight = true;
    const timer = setTimeout(() => {
      settle(false);
      if (client === this.client) this.drop?.(new Error(`no answer to the fence within ${FENCE_TIMEOUT_MS} ms`));
    }, FENCE_TIMEOUT_MS);
    let settled = false;
    const settle = (passed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      this.fenceInFlight = false;
      fence.release(passed);
      if (this.nextFence) this.sendFence(client);
    };
    client.query('').then(
      // Still the live connection: its notices up to here have all been handled.
      () => settle(client === this.client && this.users.isFollowing),
      () => settle(false),
    );
  }

  private onNotice(n: Notification): void {
    if (n.channel === CLUSTER_CHANGES_CHANNEL) return this.onClusterNotice(n);
    if (n.channel === S3_CREDENTIAL_CHANGES_CHANNEL) return this.onS3Notice(n);
    if (n.channel === APPLICATION_CREDENTIAL_CHANGES_CHANNEL) return this.onAppCredentialNotice(n);
    const notice = parseUserChangeNotice(n.payload);
    // Not ours to parse: forget everything rather than guess.
    if (!notice) {
      this.s3?.forgetAll();
      this.appCredentials?.forgetAll();
      return this.users.forgetAll();
    }
    if (notice.cluster_id !== this.clusterId) return;
    if ('user' in notice) {
      this.users.forget(notice.user);
      this.s3?.forgetUser(notice.user);
      this.appCredentials?.forgetUser(notice.user);
    } else {
      this.users.forgetAll();
      this.s3?.forgetAll();
      this.appCredentials?.forgetAll();
    }
  }

  private onS3Notice(n: Notification): void {
    const notice = parseS3CredentialNotice(n.payload);
    if (notice === null) this.s3?.forgetAll();
    else this.s3?.forget(notice.access_key);
  }

  private onAppCredentialNotice(n: Notification): void {
    const notice = parseApplicationCredentialNotice(n.payload);
    if (notice === null) this.appCredentials?.forgetAll();
    else this.appCredentials?.forget(notice.id);
  }

  private onClusterNotice(n: Notification): void {
    const notice = parseClusterChangeNotice(n.payload);
    if (this.cluster && (!notice || notice.id === this.cluster.id)) this.cluster.changed();
  }
}
