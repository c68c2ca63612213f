import type { Knex } from 'knex';
import { DEFAULT_AUTH_URL } from './config';
import * as clusters from './services/clusters';
import { SYSTEM_ACTING } from './services/context';
import * as operators from './services/operators';

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
  /** Unset: DEFAULT_AUTH_URL. */
  defaultAuthUrl?: string;
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
 * Both writes go through the services as `bootstrap`, which audit them like any other.
 */
export async function bootstrap(db: Knex, options: BootstrapOptions): Promise<BootstrapResult> {
  return db.transaction(async (trx) => {
    await trx.raw('SELECT pg_advisory_xact_lock(?)', [SETUP_LOCK_KEY]);
    const result: BootstrapResult = {};
    const name = options.adminUser ?? 'admin';
    const admin = await operators.ensureFirstAdmin(trx, SYSTEM_ACTING.bootstrap, { name, key: options.adminKey });
    if (admin && !options.adminKey) result.generatedAdmin = { name, key: admin.key };
    if (options.createDefaultCluster !== false) {
      const input = {
        name: options.defaultCluster,
        auth_url: options.defaultAuthUrl ?? DEFAULT_AUTH_URL,
        storage_url: options.defaultStorageUrl,
        region: 'RegionOne',
      };
      if (await clusters.createIfNone(trx, SYSTEM_ACTING.bootstrap, input))
        result.createdCluster = options.defaultCluster;
    }
    return result;
  });
}
