import type { Db } from '../db/database';

/**
 * The in-process wake-up of the quota reconciler: a write that changed quotas calls quotaChanged
 * after its commit, and the reconciler on the same database handle starts a pass at once. Postgres
 * also announces every change (NOTIFY cairn_quota_changes) to the replica holding the lock;
 * embedded PGlite is a single process, where this is the whole story.
 */
const listeners = new WeakMap<Db, Set<() => void>>();

export function onQuotaChange(db: Db, listener: () => void): () => void {
  const set = listeners.get(db) ?? new Set();
  set.add(listener);
  listeners.set(db, set);
  return () => set.delete(listener);
}

export function quotaChanged(db: Db): void {
  for (const listener of listeners.get(db) ?? []) listener();
}
