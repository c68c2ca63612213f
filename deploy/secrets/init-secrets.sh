#!/bin/sh
# One-shot secrets job of docker-compose.yml: creates every secret the stack needs that does not
# exist yet in the `cairn-secrets` volume (mounted here at $SECRETS_DIR) and never changes an
# existing one, so a restart keeps the Postgres password the database was initialised with. No
# secret is committed to the repository or baked into an image. To bring your own, put the file in
# the volume before the first `up` (same name, one line).
#
# Files (read by the services through the config loader's <ENV>_FILE support):
#   postgres-password       the `cairn` database owner (postgres reads it at initdb)
#   database-url            postgres://cairn:…@postgres:5432/cairn    (management-api, migrate job)
#   gateway-db-password     the gateways' read-only role `cairn_gateway` (created by the migrate job)
#   gateway-database-url    postgres://cairn_gateway:…@postgres:5432/cairn (auth-gateways)
#   redis.conf, redis-url   Redis `requirepass`, and the URL with it (auth-gateways)
#   replication-password    the role `cairn_replicator` a standby streams the primary's WAL with
#                           (profile `region`; created at initdb by deploy/postgres/replication.sh)
#   standby-gateway-database-url  postgres://cairn_gateway:…@postgres-standby:5432/cairn (the
#                           region's gateway reads its standby)
#   region-redis-url        the region's own Redis (same password), for the region's gateway
#   admin-api-key           API key of the first admin operator `admin` (management-api, migrate job)
#   signing-key-<cluster>   token signing key shared by that cluster's gateway replicas
#   collector-<cluster>-api-key   "collector-<cluster>:<key>", the storage collector's operator and
#                           key (the migrate job creates that operator, an admin of the cluster only)
#   collector-<cluster>-password  password of the collector's superuser storage user
#                           `cairn-collector` (created by the migrate job)
#   s3-secret-keys          the keyring that seals S3 secrets, `compose1:<base64 of 32 bytes>`
#                           (management-api and every gateway; rotation: docs/s3.md)
#
# Values are hex from /dev/urandom (no quoting needed in URLs, SQL or config files). The files are
# world-readable inside the volume because the consumers run as different users (postgres, redis,
# node); the volume itself is root-only on the host and mounted read-only into Cairn's services only.
set -eu
dir=${SECRETS_DIR:-/run/secrets/cairn}
clusters=${CAIRN_CLUSTERS:-}
umask 022
mkdir -p "$dir"

random_hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }

# Writes $2 into $dir/$1 unless the file exists; atomically, so a crash never leaves half a secret.
put() {
  if [ -s "$dir/$1" ]; then echo "kept      $1"; return; fi
  printf '%s\n' "$2" > "$dir/.$1.tmp"
  chmod 0444 "$dir/.$1.tmp"
  mv "$dir/.$1.tmp" "$dir/$1"
  echo "generated $1"
}
get() { tr -d '\n' < "$dir/$1"; }

put postgres-password "$(random_hex 24)"
put database-url "postgres://cairn:$(get postgres-password)@postgres:5432/cairn"
put gateway-db-password "$(random_hex 24)"
put gateway-database-url "postgres://cairn_gateway:$(get gateway-db-password)@postgres:5432/cairn"
put redis-password "$(random_hex 24)"
put redis.conf "requirepass $(get redis-password)"
put redis-url "redis://:$(get redis-password)@redis:6379/0"
put admin-api-key "$(random_hex 24)"
put replication-password "$(random_hex 24)"
put standby-gateway-database-url "postgres://cairn_gateway:$(get gateway-db-password)@postgres-standby:5432/cairn"
put region-redis-url "redis://:$(get redis-password)@redis-region:6379/0"
for c in $clusters; do
  put "signing-key-$c" "$(random_hex 32)"
  put "collector-$c-api-key" "collector-$c:$(random_hex 24)"
  put "collector-$c-password" "$(random_hex 24)"
done
put s3-secret-keys "compose1:$(head -c 32 /dev/urandom | base64)"
