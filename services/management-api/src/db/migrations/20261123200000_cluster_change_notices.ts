import { CLUSTER_CHANGES_CHANNEL } from '@cairn/contract';
import type { Knex } from 'knex';

/**
 * Every committed insert, update or delete of a cluster row is announced on the channel
 * `cairn_clusters`, whoever wrote it, so that the gateways serving that cluster use its new name,
 * URLs and region (or stop, once it is deleted) within moments and without a restart. Payload:
 * `{"id": 1}`. Clusters change rarely, so one notice per row.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION cairn_announce_cluster_changes() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('${CLUSTER_CHANGES_CHANNEL}', json_build_object('id', CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END)::text);
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER clusters_announced AFTER INSERT OR UPDATE OR DELETE ON clusters
    FOR EACH ROW EXECUTE FUNCTION cairn_announce_cluster_changes()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER clusters_announced ON clusters');
  await knex.raw('DROP FUNCTION cairn_announce_cluster_changes()');
}
