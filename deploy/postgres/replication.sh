#!/bin/sh
# Runs once, when the official postgres image initialises an empty data directory (mounted into
# /docker-entrypoint-initdb.d/ of the `postgres` service): the role a streaming standby copies
# and follows the primary with (profile `region` of docker-compose.yml, docs/deployment.md#regions),
# and the pg_hba.conf line that lets it. A data directory made before this was mounted needs the
# same two steps by hand, as the database owner.
set -eu
password=$(tr -d '\n' < /run/secrets/cairn/replication-password)
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<SQL
CREATE ROLE cairn_replicator WITH REPLICATION LOGIN PASSWORD '$password';
SQL
echo "host replication cairn_replicator all scram-sha-256" >> "$PGDATA/pg_hba.conf"
