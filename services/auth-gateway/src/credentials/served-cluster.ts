import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Endpoints } from '../keystone/documents';
import { readServedCluster, type ClusterInfo } from './cluster';

/** How often the row is read while no change notice can be heard (the bound on a change's delay then). */
export const CLUSTER_POLL_MS = 500;

/** URLs configured for this gateway: they win over the row's (CAIRN_GATEWAY_PUBLIC_URL, CAIRN_GATEWAY_STORAGE_URL). */
export interface ClusterOverrides {
  publicUrl?: string;
  storageUrl?: string;
}

/** What answers are built from: swapped whole when the row changes, never re-read per request. */
export interface ClusterSettings {
  name: string;
  /** What token documents hand out: `authUrl` is the public URL of the /auth root. */
  endpoints: Endpoints;
}

/**
 * The cluster this gateway serves, kept current. Its id and uuid never change (they bind the
 * users and tokens it serves); its name, URLs and region follow the row: re-read when a change
 * notice names it (UserChangeFeed carries them, see follow()), and every CLUSTER_POLL_MS while no
 * notice can be heard (starting, notice connection lost, embedded PGlite, notices off).
 *
 * Once the row is gone, `deleted` is true and the gateway answers 503: a cluster created later,
 * even with the same name or uuid, has a new id and other users, so it is not served by a running
 * gateway; restarting it resolves CAIRN_GATEWAY_CLUSTER again.
 */
export class ServedCluster {
  readonly id: number;
  readonly uuid: string;
  private current: ClusterSettings;
  private gone = false;
  private listening = false;
  private pollTimer?: NodeJS.Timeout;
  private reading?: Promise<void>;
  /** A change was heard while a read was under way: read once more after it. */
  private readAgain = false;
  private closed = false;
  private readFailing = false;

  constructor(
    private readonly db: Knex,
    row: ClusterInfo,
    private readonly overrides: ClusterOverrides,
    private readonly log: Logger,
    private readonly pollMs = CLUSTER_POLL_MS,
  ) {
    this.id = row.id;
    this.uuid = row.uuid;
    this.current = this.settingsOf(row);
    this.poll();
  }

  get settings(): ClusterSettings {
    return this.current;
  }

  /** Whether change notices are heard now (else the row is read every `pollMs`). */
  get isFollowing(): boolean {
    return this.listening;
  }

  /** True once the row has been deleted: answers are then 503, not built from stale settings. */
  get deleted(): boolean {
    return this.gone;
  }

  /**
   * Told by the notice connection whether it is listening on CLUSTER_CHANGES_CHANNEL. Either way the
   * row is read now: changes committed while nobody listened were not heard.
   */
  follow(listening: boolean): void {
    this.listening = listening;
    this.poll();
    this.changed();
  }

  /** A notice named this cluster (or could not be read): read the row again. */
  changed(): void {
    if (this.closed) return;
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = this.read().finally(() => {
      this.reading = undefined;
      if (this.readAgain) {
        this.readAgain = false;
        this.changed();
      }
    });
  }

  /** Resolves once a read started now has completed (tests, and the launcher's first answer). */
  async refresh(): Promise<void> {
    this.changed();
    while (this.reading) await this.reading;
  }

  close(): void {
    this.closed = true;
    clearInterval(this.pollTimer);
  }

  private poll(): void {
    clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    if (this.listening || this.closed) return;
    this.pollTimer = setInterval(() => this.changed(), this.pollMs);
    this.pollTimer.unref();
  }

  private async read(): Promise<void> {
    let row: ClusterInfo | null;
    try {
      row = await readServedCluster(this.db, this.id, this.uuid);
    } catch (e) {
      // Postgres unreachable says nothing about the cluster: keep the settings last read. Said
      // once per outage, not at every poll.
      if (!this.readFailing)
        this.log.warn(
          { err: { message: (e as Error).message } },
          "could not read this gateway's cluster row; keeping its last settings",
        );
      this.readFailing = true;
      return;
    }
    if (this.readFailing) this.log.info('cluster row readable again');
    this.readFailing = false;
    if (!row) {
      if (!this.gone)
        this.log.error(
          { cluster: this.current.name, uuid: this.uuid },
          'the cluster this gateway serves was deleted: answering 503',
        );
      this.gone = true;
      return;
    }
    const next = this.settingsOf(row);
    const before = this.current;
    const same =
      this.gone === false &&
      next.name === before.name &&
      next.endpoints.authUrl === before.endpoints.authUrl &&
      next.endpoints.storageUrl === before.endpoints.storageUrl &&
      next.endpoints.region === before.endpoints.region;
    if (same) return;
    this.current = next;
    this.gone = false;
    this.log.info(
      {
        cluster: next.name,
        publicUrl: next.endpoints.authUrl,
        storageUrl: next.endpoints.storageUrl,
        region: next.endpoints.region,
      },
      'cluster settings changed',
    );
  }

  private settingsOf(row: ClusterInfo): ClusterSettings {
    return {
      name: row.name,
      endpoints: {
        authUrl: this.overrides.publicUrl ?? row.authUrl,
        storageUrl: this.overrides.storageUrl ?? row.storageUrl,
        region: row.region,
      },
    };
  }
}
