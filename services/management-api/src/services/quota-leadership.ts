import { Client } from 'pg';
import type { Logger } from 'pino';
import { QUOTA_CHANGES_CHANNEL } from '../repositories/quotas';

/**
 * Which replica runs the quota reconciler: the one holding a Postgres advisory lock on a session
 * of its own. The lock lives as long as that session, so a replica that dies or loses its
 * connection gives it up without anyone cleaning up, and another takes it at its next poll. The
 * same session LISTENs on `cairn_quota_changes`, which wakes the leader when any replica changes
 * a quota. Embedded PGlite is one process: it always leads, and the in-process signal wakes it.
 *
 * A session cut off by the network keeps the lock on the server until Postgres notices (TCP
 * keepalive); meanwhile two replicas may both apply quotas. That is harmless: applying is
 * idempotent (each POST sets every quota header to its desired value).
 */

/** pg_try_advisory_lock's key for the quota reconciler (any constant no other lock of Cairn's uses). */
export const QUOTA_LOCK_KEY = '4242020261127';

export class QuotaLeadership {
  private client: Client | null = null;
  private leader = false;

  constructor(
    /** A direct session's URL; undefined: embedded PGlite, always the leader. */
    private readonly sessionUrl: string | undefined,
    private readonly log: Logger,
    private readonly onChange: () => void,
  ) {}

  get isLeader(): boolean {
    return this.sessionUrl === undefined || this.leader;
  }

  /** Whether this replica leads now: takes the lock when free, and checks a held one is still held. */
  async lead(): Promise<boolean> {
    if (this.sessionUrl === undefined) return true;
    try {
      const client = this.client ?? (await this.connect());
      if (this.leader) {
        await client.query('SELECT 1');
        return this.leader;
      }
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS locked', [
        QUOTA_LOCK_KEY,
      ]);
      if (rows[0]?.locked) {
        await client.query(`LISTEN ${QUOTA_CHANGES_CHANNEL}`);
        this.leader = true;
        this.log.info('quota reconciler: this replica leads');
      }
      return this.leader;
    } catch (err) {
      this.lost(err as Error);
      return false;
    }
  }

  private async connect(): Promise<Client> {
    const client = new Client({
      connectionString: this.sessionUrl,
      application_name: 'cairn-quota-reconciler',
      keepAlive: true,
    });
    client.on('error', (e) => this.lost(e, client));
    client.on('end', () => this.lost(undefined, client));
    client.on('notification', () => this.onChange());
    this.client = client;
    await client.connect();
    return client;
  }

  private lost(err?: Error, client: Client | null = this.client): void {
    if (client !== this.client || !client) return;
    if (this.leader)
      this.log.warn({ err: err?.message }, 'quota reconciler: lock session lost; another replica may lead');
    this.leader = false;
    this.client = null;
    client.end().catch(() => undefined);
  }

  /** Gives up the lock (ending the session releases it). */
  async release(): Promise<void> {
    const client = this.client;
    this.client = null;
    this.leader = false;
    await client?.end().catch(() => undefined);
  }
}
