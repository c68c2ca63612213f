#!/bin/sh
# Smoke test of the running compose stack, done as an operator and the stack's clients would: the
# management API through nginx with the admin key, the real swift CLI (V1 and Keystone V3) against
# each cluster's auth_url, a token issued by one gateway replica validated by the other, revocation
# on deletion, the probes of every replica, and optionally the TLS override and the `region`
# profile. Every step is checked: the script stops at the first unexpected answer (exit 1) and ends
# with "N passed, 0 failed". Run from the repository root once the stack is up
# (docs/deployment.md#smoke-testing-the-stack). Needs curl, python3 and swift (python3-swiftclient).
# Not part of `pnpm test` or CI: it needs a container engine.
#
#   sh deploy/compose-smoke.sh                                  the default stack, Docker Compose v2
#   COMPOSE=podman-compose sh deploy/compose-smoke.sh           the same under podman-compose
#   CAIRN_TLS_CA=ca.pem sh deploy/compose-smoke.sh              also docker-compose.tls.yml's listeners
#   SMOKE_REGION=1 sh deploy/compose-smoke.sh                   also profile `region`
#
# COMPOSE is the compose command (`docker compose`, `docker-compose`, `podman-compose`); with
# podman-compose the script runs `podman exec <project>_<service>_1` instead of its `exec` (before
# podman-compose 1.1, its own messages go to stdout with the command's). COMPOSE_PROJECT_NAME defaults to the current directory's name.
# Runs again on the same volumes: what it creates, it deletes.
set -eu
COMPOSE=${COMPOSE:-docker compose}
PROJECT=${COMPOSE_PROJECT_NAME:-$(basename "$PWD")}
HOST=${CAIRN_PUBLIC_HOST:-127.0.0.1}
API=http://$HOST:8000/api/v1
EAST=http://$HOST:5001/auth
WEST=http://$HOST:5002/auth
REGION=http://$HOST:5011/auth
PASSWORD='correct-horse-battery-staple-42'
NEW_PASSWORD='another-long-password-0042'

in_service() {
  svc=$1; shift
  if [ "$COMPOSE" = podman-compose ]; then podman exec "${PROJECT}_${svc}_1" "$@"; else $COMPOSE exec -T "$svc" "$@"; fi
}
service_logs() {
  if [ "$COMPOSE" = podman-compose ]; then podman logs "${PROJECT}_$1_1" 2>&1; else $COMPOSE logs "$1" 2>&1; fi
}

passed=0
section() { printf '\n# %s\n' "$*"; }
ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { echo "FAIL $1" >&2; echo "$passed passed, 1 failed"; exit 1; }
# check <what> <expected> <actual>
check() { if [ "$3" = "$2" ]; then ok "$1 ($3)"; else fail "$1: expected $2, got $3"; fi; }
# contains <what> <needle> <haystack>
contains() { case "$3" in *"$2"*) ok "$1" ;; *) fail "$1: expected '$2' in: $(printf %s "$3" | cut -c1-300)" ;; esac; }
# runs <what> <command…>: the command exits 0 (its output is not shown: it may hold a token).
runs() { what=$1; shift; if "$@" >/dev/null 2>&1; then ok "$what"; else fail "$what: '$1' exited non-zero"; fi; }
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
# until_code <expected> <seconds> curl-args…: the status once it is <expected>, or the last one seen.
until_code() {
  want=$1; secs=$2; shift 2; got=
  for _ in $(seq "$secs"); do got=$(code "$@"); [ "$got" = "$want" ] && break; sleep 1; done
  printf %s "$got"
}
# probe <service> <port> <path>: "<status> <body>" from inside the replica's own container.
probe() {
  in_service "$1" node -e "fetch('http://127.0.0.1:$2$3').then(async (r) => console.log(r.status, await r.text()), (e) => console.log(0, e.message))"
}
v1_login() { code -H "X-Auth-User: $2" -H "X-Auth-Key: $3" "$1/v1.0"; }
swift_v3() {
  swift --auth-version 3 --os-auth-url "$1/v3" --os-username "$2" --os-password "$3" --os-project-name "$2" \
    --os-user-domain-id default --os-project-domain-id default ${4:+--os-cacert "$4"} auth
}
v1_token() { curl -s -D - -o /dev/null -H "X-Auth-User: $2" -H "X-Auth-Key: $3" "$1/v1.0" | tr -d '\r' | sed -n 's/^[Xx]-[Aa]uth-[Tt]oken: //p'; }
validate() { code -H "X-Auth-Token: $2" -H "X-Subject-Token: $3" "$1/v3/auth/tokens"; }
# validate_in <gateway service> <token> <subject token>: the status from that replica alone.
validate_in() {
  in_service "$1" node -e "fetch('http://127.0.0.1:5000/auth/v3/auth/tokens', { headers: { 'X-Auth-Token': process.argv[1], 'X-Subject-Token': process.argv[2] } }).then((r) => console.log(r.status), (e) => console.log(0, e.message))" "$2" "$3" | tr -d '\r'
}

KEY=$(in_service management-api-1 cat /run/secrets/cairn/admin-api-key | tr -d '\r\n')
[ -n "$KEY" ] || fail "no admin key in management-api-1's /run/secrets/cairn/admin-api-key"
AUTH="Authorization: ApiKey admin:$KEY"

section "the stack answers (services restart until Postgres, the schema and their cluster are there)"
check "GET $API/clusters/ with the admin key" 200 "$(until_code 200 120 -H "$AUTH" "$API/clusters/")"
# A gateway's root is Keystone version discovery: 300 Multiple Choices once it is up.
check "GET $EAST/" 300 "$(until_code 300 60 "$EAST/")"
check "GET $WEST/" 300 "$(until_code 300 60 "$WEST/")"

section "probes and version"
VERSION=$(curl -sf "$API/" | json "d['version']")
contains "GET $API/ names the version" . "$VERSION"
check "GET http://$HOST:8000/healthz: the same version" "$VERSION" "$(curl -sf "http://$HOST:8000/healthz" | json "d['version']")"
check "GET http://$HOST:5001/healthz (through nginx)" 200 "$(code "http://$HOST:5001/healthz")"
check "GET http://$HOST:8000/metrics is not published" 404 "$(code "http://$HOST:8000/metrics")"
check "GET http://$HOST:8000/readyz is not published" 404 "$(code "http://$HOST:8000/readyz")"
for svc in management-api-1 management-api-2; do
  check "$svc /readyz, inside its container" '200 {"status":"ok","postgres":"ok"}' "$(probe "$svc" 8000 /readyz)"
done
for svc in gateway-east-1 gateway-east-2 gateway-west-1 gateway-west-2; do
  check "$svc /readyz, inside its container" '200 {"status":"ok","postgres":"ok","redis":"ok","cluster":"ok","standby":"primary"}' "$(probe "$svc" 5000 /readyz)"
done

section "operators: clusters and users through the management API"
contains "the migrate job's clusters east and west" "east west" "$(curl -sf -H "$AUTH" "$API/clusters/?order_by=id" | json "' '.join(c['name'] for c in d['objects'])")"
check "GET $API/clusters/ without a key" 401 "$(code "$API/clusters/")"
EAST_URI=$(curl -sf -H "$AUTH" "$API/clusters/?name=east" | json "d['objects'][0]['resource_uri']")
created=$(curl -s -i -H "$AUTH" -H 'Content-Type: application/json' -X POST "$API/users/" \
  -d "{\"cluster\": \"$EAST_URI\", \"user\": \"smoke-alice\", \"password\": \"$PASSWORD\"}" | tr -d '\r')
check "POST $API/users/ smoke-alice on east" 201 "$(printf '%s\n' "$created" | sed -n '1s/^HTTP[^ ]* \([0-9]*\).*/\1/p')"
ALICE=$(printf '%s\n' "$created" | sed -n 's#^[Ll]ocation: .*\(/api/v1/users/[0-9]*/\)$#\1#p')
check "PATCH $ALICE password" 202 "$(code -H "$AUTH" -H 'Content-Type: application/json' -X PATCH "http://$HOST:8000$ALICE" -d "{\"password\": \"$NEW_PASSWORD\"}")"
# A superuser storage user validates other users' tokens; kept between runs (created once).
code -H "$AUTH" -H 'Content-Type: application/json' -X POST "$API/users/" \
  -d "{\"cluster\": \"$EAST_URI\", \"user\": \"smoke-ops\", \"password\": \"$PASSWORD\", \"is_superuser\": true}" >/dev/null

section "clients: logins at each cluster's auth_url"
check "V1 login at east with the old password" 401 "$(v1_login "$EAST" smoke-alice "$PASSWORD")"
check "V1 login at east with the new password" 200 "$(v1_login "$EAST" smoke-alice "$NEW_PASSWORD")"
runs "swift -A $EAST/v1.0 -U smoke-alice auth" swift -A "$EAST/v1.0" -U smoke-alice -K "$NEW_PASSWORD" auth
runs "swift --auth-version 3 --os-auth-url $EAST/v3 … auth" swift_v3 "$EAST" smoke-alice "$NEW_PASSWORD"
check "V1 login at west (smoke-alice is east's user)" 401 "$(v1_login "$WEST" smoke-alice "$NEW_PASSWORD")"

section "tokens: issued by one replica, validated by the other, revoked with the user"
ALICE_TOKEN=$(v1_token "$EAST" smoke-alice "$NEW_PASSWORD")
OPS_TOKEN=$(v1_token "$EAST" smoke-ops "$PASSWORD")
[ -n "$ALICE_TOKEN" ] && [ -n "$OPS_TOKEN" ] || fail "no token for smoke-alice or smoke-ops at $EAST/v1.0"
check "validate smoke-alice's token on gateway-east-1, then on gateway-east-2" "200 200" \
  "$(validate_in gateway-east-1 "$OPS_TOKEN" "$ALICE_TOKEN") $(validate_in gateway-east-2 "$OPS_TOKEN" "$ALICE_TOKEN")"
check "validate smoke-alice's token through nginx" 200 "$(validate "$EAST" "$OPS_TOKEN" "$ALICE_TOKEN")"
check "validate east's token at west" 401 "$(validate "$WEST" "$OPS_TOKEN" "$ALICE_TOKEN")"
check "DELETE $ALICE" 204 "$(code -H "$AUTH" -X DELETE "http://$HOST:8000$ALICE")"
check "smoke-alice's token after the deletion, on gateway-east-1 and gateway-east-2" "404 404" \
  "$(validate_in gateway-east-1 "$OPS_TOKEN" "$ALICE_TOKEN") $(validate_in gateway-east-2 "$OPS_TOKEN" "$ALICE_TOKEN")"
check "GET $ALICE after the deletion" 404 "$(code -H "$AUTH" "http://$HOST:8000$ALICE")"

section "console and S3"
check "GET http://$HOST:8000/console/" 200 "$(code "http://$HOST:8000/console/")"
OPS_URI=$(curl -sf -H "$AUTH" "$API/users/?user=smoke-ops&cluster=$(basename "$EAST_URI")" | json "d['objects'][0]['resource_uri']")
cred=$(curl -sf -H "$AUTH" -H 'Content-Type: application/json' -X POST "$API/s3_credentials/" -d "{\"user\": \"$OPS_URI\"}")
ACCESS=$(printf %s "$cred" | json "d['access_key']")
SECRET=$(printf %s "$cred" | json "d['secret']")
s3tokens() {
  body=$(python3 -c "
import base64, hashlib, hmac, json, sys
sts = b'GET\n\n\nTue, 24 Nov 2026 00:00:00 GMT\n/bucket/object'
sig = base64.b64encode(hmac.new(sys.argv[2].encode(), sts, hashlib.sha1).digest()).decode()
print(json.dumps({'credentials': {'access': sys.argv[1], 'token': base64.urlsafe_b64encode(sts).decode(), 'signature': sig}}))" "$ACCESS" "$1")
  code -H "X-Auth-Token: $OPS_TOKEN" -H 'Content-Type: application/json' -X POST "$EAST/v3/s3tokens" -d "$body"
}
check "east's /v3/s3tokens, signed with the API's secret" 200 "$(s3tokens "$SECRET")"
check "east's /v3/s3tokens, signed with a wrong secret" 401 "$(s3tokens not-the-secret)"
# A user holds at most two credentials: delete this one so that the script can run again.
check "DELETE the S3 credential" 204 "$(code -H "$AUTH" -X DELETE "http://$HOST:8000$(printf %s "$cred" | json "d['resource_uri']")")"

section "collectors: the migrate job's operator for east's collector"
CKEY=$(in_service management-api-1 cat /run/secrets/cairn/collector-east-api-key | tr -d '\r\n')
WEST_URI=$(curl -sf -H "$AUTH" "$API/clusters/?name=west" | json "d['objects'][0]['resource_uri']")
check "east's utilization with its key" 200 "$(code -H "Authorization: ApiKey $CKEY" "http://$HOST:8000${EAST_URI}utilization/accounts/")"
check "west's utilization with its key" 404 "$(code -H "Authorization: ApiKey $CKEY" "http://$HOST:8000${WEST_URI}utilization/accounts/")"
if in_service collector-east true >/dev/null 2>&1; then
  for _ in $(seq 90); do service_logs collector-east | grep -q 'account(s) sampled' && break; sleep 1; done
  contains "collector-east (profile collectors) finished a round" 'account(s) sampled' "$(service_logs collector-east)"
else
  echo "skip collector-east is not running (profile collectors)"
fi

if [ -n "${CAIRN_TLS_CA:-}" ]; then
  section "TLS: docker-compose.tls.yml's listeners, verified with $CAIRN_TLS_CA"
  TLS_HOST=${CAIRN_TLS_HOST:-$HOST}
  tls() { curl -s --cacert "$CAIRN_TLS_CA" "$@"; }
  # nginx may just have been recreated with the override.
  up=; for _ in $(seq 30); do up=$(tls -o /dev/null -w '%{http_code}' "https://$TLS_HOST:8443/healthz" || true); [ "$up" = 200 ] && break; sleep 1; done
  check "GET https://$TLS_HOST:8443/healthz" 200 "$up"
  check "GET https://$TLS_HOST:8443/api/v1/: the version" "$VERSION" "$(tls -f "https://$TLS_HOST:8443/api/v1/" | json "d['version']")"
  check "GET https://$TLS_HOST:8443/api/v1/clusters/ with the admin key" 200 "$(tls -o /dev/null -w '%{http_code}' -H "$AUTH" "https://$TLS_HOST:8443/api/v1/clusters/")"
  check "GET https://$TLS_HOST:8443/metrics is not published" 404 "$(tls -o /dev/null -w '%{http_code}' "https://$TLS_HOST:8443/metrics")"
  contains "Strict-Transport-Security on 8443" 'strict-transport-security: max-age=' "$(tls -D - -o /dev/null "https://$TLS_HOST:8443/healthz" | tr 'A-Z' 'a-z')"
  check "GET https://$TLS_HOST:5443/auth/ (east)" 300 "$(tls -o /dev/null -w '%{http_code}' "https://$TLS_HOST:5443/auth/")"
  check "GET https://$TLS_HOST:5444/auth/ (west)" 300 "$(tls -o /dev/null -w '%{http_code}' "https://$TLS_HOST:5444/auth/")"
  check "V1 login at https://$TLS_HOST:5443/auth" 200 "$(tls -o /dev/null -w '%{http_code}' -H 'X-Auth-User: smoke-ops' -H "X-Auth-Key: $PASSWORD" "https://$TLS_HOST:5443/auth/v1.0")"
  runs "swift --auth-version 3 --os-auth-url https://$TLS_HOST:5443/auth/v3 --os-cacert … auth" swift_v3 "https://$TLS_HOST:5443/auth" smoke-ops "$PASSWORD" "$CAIRN_TLS_CA"
  # curl's exit code 60: the certificate does not verify against the system's CAs alone.
  check "https://$TLS_HOST:8443/ without the CA" 60 "$(curl -s -o /dev/null "https://$TLS_HOST:8443/healthz" || echo $?)"
fi

if [ -n "${SMOKE_REGION:-}" ]; then
  section "region: postgres-standby streams from postgres; gateway-region reads it"
  streaming=
  for _ in $(seq 120); do
    streaming=$(in_service postgres psql -U cairn -d cairn -Atc "SELECT state FROM pg_stat_replication WHERE usename = 'cairn_replicator'" | tr -d '\r')
    [ "$streaming" = streaming ] && break; sleep 1
  done
  check "pg_stat_replication on the primary: cairn_replicator" streaming "$streaming"
  check "the standby is in recovery" t "$(in_service postgres-standby psql -U cairn -d cairn -Atc 'SELECT pg_is_in_recovery()' | tr -d '\r')"
  check "GET http://$HOST:5011/readyz (gateway-region, published directly)" 200 "$(until_code 200 120 "http://$HOST:5011/readyz")"
  contains "gateway-region's /readyz shows the standby's lag" '"standby":"ok, lag ' "$(curl -s "http://$HOST:5011/readyz")"
  user="smoke-region-$(date +%s)"
  created=$(curl -s -i -H "$AUTH" -H 'Content-Type: application/json' -X POST "$API/users/" \
    -d "{\"cluster\": \"$EAST_URI\", \"user\": \"$user\", \"password\": \"$PASSWORD\"}" | tr -d '\r')
  check "POST $API/users/ $user on east (the primary)" 201 "$(printf '%s\n' "$created" | sed -n '1s/^HTTP[^ ]* \([0-9]*\).*/\1/p')"
  USER_URI=$(printf '%s\n' "$created" | sed -n 's#^[Ll]ocation: .*\(/api/v1/users/[0-9]*/\)$#\1#p')
  check "V1 login through gateway-region (once the standby has it)" 200 \
    "$(until_code 200 10 -H "X-Auth-User: $user" -H "X-Auth-Key: $PASSWORD" "$REGION/v1.0")"
  runs "swift --auth-version 3 --os-auth-url $REGION/v3 … auth" swift_v3 "$REGION" "$user" "$PASSWORD"
  check "PATCH $USER_URI enabled=false on the primary" 202 "$(code -H "$AUTH" -H 'Content-Type: application/json' -X PATCH "http://$HOST:8000$USER_URI" -d '{"enabled": false}')"
  check "V1 login through gateway-region once disabled" 401 \
    "$(until_code 401 10 -H "X-Auth-User: $user" -H "X-Auth-Key: $PASSWORD" "$REGION/v1.0")"
  # Replay paused: the copy ages past CAIRN_STANDBY_MAX_LAG (5 s) and the gateway refuses.
  in_service postgres-standby psql -U cairn -d cairn -Atc 'SELECT pg_wal_replay_pause()' >/dev/null
  check "gateway-region's /readyz with replay paused" 503 "$(until_code 503 30 "http://$HOST:5011/readyz")"
  contains "its /readyz says why" 'stale, lag ' "$(curl -s "http://$HOST:5011/readyz")"
  check "a V1 login through gateway-region meanwhile" 503 "$(v1_login "$REGION" smoke-ops "$PASSWORD")"
  in_service postgres-standby psql -U cairn -d cairn -Atc 'SELECT pg_wal_replay_resume()' >/dev/null
  check "gateway-region's /readyz with replay resumed" 200 "$(until_code 200 30 "http://$HOST:5011/readyz")"
  check "DELETE $USER_URI" 204 "$(code -H "$AUTH" -X DELETE "http://$HOST:8000$USER_URI")"
fi

echo
echo "$passed passed, 0 failed"
