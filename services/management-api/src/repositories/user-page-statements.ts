import type { Db } from '../db/database';
import { runPrepared } from '../db/prepared';
import type { ListQuery } from '../http/filters';
import { isShallowOffset, type Page } from './list-query';

/**
 * The commonest user lists (page 1 of one cluster, or of every user, ordered by id, near the start)
 * as pg named prepared statements sent on a pooled connection, not through knex's builder and
 * runner. Measured on the page-1 benchmark, knex's compile-and-run was the largest cost in the API
 * process after the socket writes; a named statement is also parsed and planned once per
 * connection instead of once per request. Same SQL as the generic path (total from the
 * per-cluster counter, page from the (cluster_id, id) index or the primary key), so the same rows.
 *
 * Only on Postgres outside a transaction: embedded PGlite and transactions go the generic way.
 */

const PAGE = `SELECT u.id, u.cluster_id, u.username, u.is_superuser, u.enabled FROM storage_users u`;

/** $1 cluster id, $2 limit, $3 offset. */
const ONE_CLUSTER = {
  name: 'cairn_users_page_of_cluster',
  text: `SELECT t.total, p.* FROM (SELECT coalesce(sum(user_count), 0)::bigint AS total FROM cluster_user_counts WHERE cluster_id = $1::int) t
    LEFT JOIN LATERAL (${PAGE} WHERE u.cluster_id = $1::int ORDER BY u.id LIMIT $2 OFFSET $3) p ON true ORDER BY p.id`,
};

/** $1 limit, $2 offset. */
const ALL_CLUSTERS = {
  name: 'cairn_users_page_of_all',
  text: `SELECT t.total, p.* FROM (SELECT coalesce(sum(user_count), 0)::bigint AS total FROM cluster_user_counts) t
    LEFT JOIN LATERAL (${PAGE} ORDER BY u.id LIMIT $1 OFFSET $2) p ON true ORDER BY p.id`,
};

export interface UserSummaryRow {
  id: string;
  cluster_id: number;
  username: string;
  is_superuser: boolean;
  enabled: boolean;
}

/**
 * The page if the query has the common shape: ordered by id ascending (the default), not deep
 * (the generic path's own threshold), limited to one cluster or to none (`clusters` as computed from the filters and
 * the operator's visibility). Null: not this shape, or not a plain Postgres handle.
 */
export async function fetchCommonUserPage(db: Db, query: ListQuery, clusters: Set<string> | 'all' | null): Promise<Page<UserSummaryRow> | null> {
  if (clusters === null || (clusters !== 'all' && clusters.size !== 1)) return null;
  if (!isShallowOffset(query.offset)) return null;
  const order = query.ordering;
  if (order.length > 1 || (order.length === 1 && (order[0]!.column !== 'id' || order[0]!.alias !== 'u' || order[0]!.desc))) return null;
  const offset = String(query.offset);
  const rows =
    clusters === 'all' ? await runPrepared(db, ALL_CLUSTERS, [query.limit, offset]) : await runPrepared(db, ONE_CLUSTER, [[...clusters][0], query.limit, offset]);
  if (rows === null) return null;
  const page: UserSummaryRow[] = [];
  for (const r of rows) {
    if (r[1] === null) continue;
    page.push({ id: String(r[1]), cluster_id: Number(r[2]), username: r[3] as string, is_superuser: r[4] as boolean, enabled: r[5] as boolean });
  }
  return { total: Number(rows[0]?.[0] ?? 0), rows: page };
}
