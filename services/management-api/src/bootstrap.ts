import type { Knex } from 'knex';
import { BOOTSTRAP_ACTOR, recordAudit } from './repositories/audit';
import { countClusters, createCluster } from './repositories/clusters';
import { countAdmins } from './repositories/operators';
import { clusterTarget } from './services/clusters';
import { createOperatorWithKey } from './services/operators';
import { clusterJson } from './resources/representations';

/**
 * The advisory lock that serialises first-start setup across replicas and the migrate job's
 * cluster declarations: both check "is there a cluster yet" and must not interleave.
 */
export const SETUP_LOCK_KEY = 0x0ca1e0;

export interface BootstrapOptions {
  adminUser?: string;
  adminKey?: string;
  defaultCluster: string;
  /** Unset: true. */
  createDefaultCluster?: boolean;
  defaultAuthUrl: string;
  defaultStorageUrl: string;
}

export interface BootstrapResult {
  /** Set only when this start generated the first admin's key: print it once, never log it. */
  generatedAdmin?: { name: string; key: string };
  createdCluster?: string;
}

/**
 * First-start setup, idempotent and safe with several replicas starting at once (an advisory lock
 * serialises them): the first admin operator, and a default cluster when there is none.
 *
 * "First admin" means: no admin with access to every cluster exists yet. Operators limited to a
 * cluster may already be there (the migrate job declares the collectors' before any replica
 * starts), and they cannot manage operators; the API never lets the last unlimited admin go.
 */
export async function bootstrap(db: Knex, options: BootstrapOptions): Promise<BootstrapResult> {
  return db.transaction(async (trx) => {
    await trx.raw('SELECT pg_advisory_xact_lock(?)', [SETUP_LOCK_KEY]);
    const result: BootstrapResult = {};
    if ((await countAdmins(trx)) === 0) {
      const name = options.adminUser ?? 'admin';
      const { key } = await createOperatorWithKey(trx, { name, role: 'admin', clusterIds: [], key: options.adminKey }, BOOTSTRAP_ACTOR);
      if (!options.adminKey) result.generatedAdmin = { name, key };
    }
    if (options.createDefaultCluster !== false && (await countClusters(trx)) === 0) {
      const cluster = await createCluster(trx, {
        name: options.defaultCluster,
        auth_url: options.defaultAuthUrl,
        storage_url: options.defaultStorageUrl,
        region: 'RegionOne',
      });
      await recordAudit(trx, BOOTSTRAP_ACTOR, { action: 'create', target: clusterTarget(cluster), before: null, after: clusterJson(cluster) });
      result.createdCluster = options.defaultCluster;
    }
    return result;
  });
}
