import { Client, type Notification } from 'pg';
import type { Logger } from 'pino';
import type { UserDirectory } from './users';

/** The channel the management API's triggers announce every committed user change on. */
export const USER_CHANGES_CHANNEL = 'cairn_storage_users';

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 2000;

/**
 * Follows `LISTEN cairn_storage_users` on a connection of its own and drops the changed users'
 * rows from the directory as each change commits. While it listens, the directory may serve
 * logins from memory; while it does not (starting, connection lost, reconnecting), it may not, and
 * everything remembered is dropped, since changes made meanwhile were not heard.
 */
export class UserChangeFeed {
  private client?: Client;
  private closed = false;
  private retryMs = RETRY_MIN_MS;
  private retryTimer?: NodeJS.Timeout;

  constructor(
    private readonly connectionString: string,
    private readonly clusterId: number,
    private readonly users: UserDirectory,
    private readonly log: Logger,
  ) {}

  /** Starts listening in the background; resolves once the first attempt has succeeded or failed. */
  start(): Promise<void> {
    return this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.users.follow(false);
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.connectionString, application_name: 'cairn-auth-gateway-listen', keepAlive: true });
    this.client = client;
    let lost = false;
    const onLost = (e?: Error) => {
      if (lost) return;
      lost = true;
      this.users.follow(false);
      if (this.closed) return;
      this.log.warn({ err: e?.message }, 'user change feed lost: logins read users from Postgres until it is back');
      client.end().catch(() => undefined);
      this.retryTimer = setTimeout(() => void this.connect(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (n) => this.onNotice(n));
    try {
      await client.connect();
      await client.query(`LISTEN ${USER_CHANGES_CHANNEL}`);
      if (this.closed || lost) return;
      this.retryMs = RETRY_MIN_MS;
      this.users.follow(true);
    } catch (e) {
      onLost(e as Error);
    }
  }

  private onNotice(n: Notification): void {
    let notice: { cluster_id?: unknown; user?: unknown; all?: unknown };
    try {
      notice = JSON.parse(n.payload ?? '') as typeof notice;
    } catch {
      // Not ours to parse: forget everything rather than guess.
      return this.users.forgetAll();
    }
    if (notice.cluster_id !== this.clusterId) return;
    if (typeof notice.user === 'string') this.users.forget(notice.user);
    else this.users.forgetAll();
  }
}
