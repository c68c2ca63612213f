#!/bin/sh
# Walks through the running compose stack as its clients would: the management API through nginx
# with the admin key, the real swift CLI (V1 and Keystone V3) against each cluster's auth_url, a
# token issued by one gateway replica validated by the other, and revocation on user deletion.
# Needs curl, python3 and swift (python3-swiftclient). Not part of `pnpm test` (it needs the stack).
#
#   sh deploy/compose-smoke.sh                              # podman-compose, project "main"
#   EXEC='docker compose exec -T' sh deploy/compose-smoke.sh   # Docker Compose v2
set -eu
EXEC=${EXEC:-podman-exec}
HOST=${CAIRN_PUBLIC_HOST:-127.0.0.1}
API=http://$HOST:8000/api/v1
EAST=http://$HOST:5001/auth
WEST=http://$HOST:5002/auth
PASSWORD='correct-horse-battery-staple-42'
NEW_PASSWORD='another-long-password-0042'

# `podman-exec <service> cmd…`: podman-compose names containers <project>_<service>_1.
podman_exec() { svc=$1; shift; podman exec "${COMPOSE_PROJECT_NAME:-main}_${svc}_1" "$@"; }
in_service() { if [ "$EXEC" = podman-exec ]; then podman_exec "$@"; else $EXEC "$@"; fi; }
step() { printf '\n$ %s\n' "$*"; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

KEY=$(in_service management-api-1 cat /run/secrets/cairn/admin-api-key | tr -d '\r\n')
AUTH="Authorization: ApiKey admin:$KEY"
echo '# admin key: read from the cairn-secrets volume (value not shown here)'
if [ "$EXEC" = podman-exec ]; then reader="podman exec ${COMPOSE_PROJECT_NAME:-main}_management-api-1_1"; else reader="$EXEC management-api-1"; fi
echo "AUTH=\"Authorization: ApiKey admin:\$($reader cat /run/secrets/cairn/admin-api-key)\""

# The stack may still be starting (services restart until Postgres, the schema and their cluster are there).
# A gateway's root is Keystone version discovery, which answers 300 Multiple Choices when it is up.
ready=false
for _ in $(seq 60); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' -H "$AUTH" "$API/clusters/")" = 200 ] \
    && [ "$(curl -s -o /dev/null -w '%{http_code}' "$EAST/")" = 300 ] && [ "$(curl -s -o /dev/null -w '%{http_code}' "$WEST/")" = 300 ] \
    && ready=true && break
  sleep 1
done
$ready || { echo "the stack did not answer within 60 s: $API/clusters/ 200, $EAST/ and $WEST/ 300 expected" >&2; exit 1; }

step "curl -s -H \"\$AUTH\" $API/clusters/"
curl -sf -H "$AUTH" "$API/clusters/" | json "'\n'.join(f\"{c['id']} {c['name']} auth_url={c['auth_url']} storage_url={c['storage_url']}\" for c in d['objects'])"

step "curl -s -o /dev/null -w '%{http_code}' $API/clusters/   (no key)"
curl -s -o /dev/null -w '%{http_code}\n' "$API/clusters/"

step "curl -s -i -H \"\$AUTH\" -H 'Content-Type: application/json' -X POST $API/users/ -d '{cluster: /api/v1/clusters/1/, user: alice, password: …}'"
created=$(curl -s -i -H "$AUTH" -H 'Content-Type: application/json' -X POST "$API/users/" \
  -d "{\"cluster\": \"/api/v1/clusters/1/\", \"user\": \"alice\", \"password\": \"$PASSWORD\"}")
printf '%s\n' "$created" | grep -iE '^HTTP/|^location:' | tr -d '\r'
ALICE=$(printf '%s\n' "$created" | sed -n 's#^[Ll]ocation: .*/users/\([0-9]*\)/.*#\1#p' | tr -d '\r')
step "curl -s -H \"\$AUTH\" $API/users/$ALICE/"
curl -sf -H "$AUTH" "$API/users/$ALICE/"; echo
step "curl -s -H \"\$AUTH\" -X PATCH $API/users/$ALICE/ -d password=…  -w '%{http_code}'"
curl -s -o /dev/null -w '%{http_code}\n' -H "$AUTH" -X PATCH "$API/users/$ALICE/" -d "password=$NEW_PASSWORD"
step "curl -s -H \"\$AUTH\" -X POST $API/users/ (superuser ops on east, for token validation)"
ops=$(curl -s -i -H "$AUTH" -H 'Content-Type: application/json' -X POST "$API/users/" \
  -d "{\"cluster\": \"/api/v1/clusters/1/\", \"user\": \"ops\", \"password\": \"$PASSWORD\", \"is_superuser\": true}")
printf '%s\n' "$ops" | grep -iE '^HTTP/' | tr -d '\r'

step "swift -A $EAST/v1.0 -U alice -K '…' auth     (the old password)"
swift -A "$EAST/v1.0" -U alice -K "$PASSWORD" auth 2>&1 | sed 's/^/  /' || true
step "swift -A $EAST/v1.0 -U alice -K '…' auth     (the new password)"
swift -A "$EAST/v1.0" -U alice -K "$NEW_PASSWORD" auth
step "swift --auth-version 3 --os-auth-url $EAST/v3 --os-username alice --os-password '…' --os-project-name alice --os-user-domain-id default --os-project-domain-id default auth"
swift --auth-version 3 --os-auth-url "$EAST/v3" --os-username alice --os-password "$NEW_PASSWORD" --os-project-name alice \
  --os-user-domain-id default --os-project-domain-id default auth
step "swift -A $WEST/v1.0 -U alice -K '…' auth     (alice is a user of east, not of west)"
swift -A "$WEST/v1.0" -U alice -K "$NEW_PASSWORD" auth 2>&1 | sed 's/^/  /' || true

# A replica by itself: node's fetch inside that replica's container, on its own port 5000.
fetch_in() {
  svc=$1; shift
  in_service "$svc" node -e "
    const [method, path, ...h] = process.argv.slice(1);
    const headers = Object.fromEntries(h.map((x) => x.split(/:(.*)/s).slice(0, 2).map((s) => s.trim())));
    fetch('http://127.0.0.1:5000' + path, { method, headers }).then(async (r) => {
      console.log(r.status, 'x-subject-token=' + (r.headers.get('x-auth-token') ?? r.headers.get('x-subject-token') ?? ''));
      const t = await r.text(); if (t) console.log(t.slice(0, 300));
    });" "$@"
}
step "gateway-east-1: GET /auth/v1.0 as alice, and as ops (superuser)"
ALICE_TOKEN=$(fetch_in gateway-east-1 GET /auth/v1.0 "X-Auth-User: alice" "X-Auth-Key: $NEW_PASSWORD" | sed -n 's/^200 x-subject-token=//p')
OPS_TOKEN=$(fetch_in gateway-east-1 GET /auth/v1.0 "X-Auth-User: ops" "X-Auth-Key: $PASSWORD" | sed -n 's/^200 x-subject-token=//p')
echo "alice token from gateway-east-1: $(printf %s "$ALICE_TOKEN" | cut -c1-24)…  ops token: $(printf %s "$OPS_TOKEN" | cut -c1-24)…"
step "gateway-east-2: GET /auth/v3/auth/tokens  X-Auth-Token: <ops> X-Subject-Token: <alice's token from east-1>"
fetch_in gateway-east-2 GET /auth/v3/auth/tokens "X-Auth-Token: $OPS_TOKEN" "X-Subject-Token: $ALICE_TOKEN" | cut -c1-300
step "through nginx, four times (both replicas): curl -s -o /dev/null -w '%{http_code}' $EAST/v3/auth/tokens -H X-Auth-Token… -H X-Subject-Token…"
for _ in 1 2 3 4; do curl -s -o /dev/null -w '%{http_code} ' -H "X-Auth-Token: $OPS_TOKEN" -H "X-Subject-Token: $ALICE_TOKEN" "$EAST/v3/auth/tokens"; done; echo
step "the east token on west's gateway: curl … $WEST/v3/auth/tokens"
curl -s -o /dev/null -w '%{http_code}\n' -H "X-Auth-Token: $OPS_TOKEN" -H "X-Subject-Token: $ALICE_TOKEN" "$WEST/v3/auth/tokens"

step "curl -s -H \"\$AUTH\" -X DELETE $API/users/$ALICE/ -w '%{http_code}'"
curl -s -o /dev/null -w '%{http_code}\n' -H "$AUTH" -X DELETE "$API/users/$ALICE/"
step "alice's token after the deletion, on each replica directly"
fetch_in gateway-east-1 GET /auth/v3/auth/tokens "X-Auth-Token: $OPS_TOKEN" "X-Subject-Token: $ALICE_TOKEN" | head -1
fetch_in gateway-east-2 GET /auth/v3/auth/tokens "X-Auth-Token: $OPS_TOKEN" "X-Subject-Token: $ALICE_TOKEN" | head -1
step "curl -s -H \"\$AUTH\" $API/users/$ALICE/ -w '%{http_code}'"
curl -s -o /dev/null -w '%{http_code}\n' -H "$AUTH" "$API/users/$ALICE/"

step "curl -s -D - -o /dev/null http://$HOST:8000/console/   (the operators' console, served by the API replicas)"
console=$(curl -s -D - -o /dev/null "http://$HOST:8000/console/" | tr -d '\r')
printf '%s\n' "$console" | grep -iE '^HTTP/|^content-security-policy:' | cut -c1-100
printf '%s\n' "$console" | grep -q '^HTTP/1.1 200' || { echo 'the console is not served' >&2; exit 1; }

step "S3: an S3 credential for ops from the API, then east's gateway checks a V2 signature made with it"
cred=$(curl -sf -H "$AUTH" -H 'Content-Type: application/json' -X POST "$API/s3_credentials/" \
  -d "{\"user\": \"$(curl -sf -H "$AUTH" "$API/users/?user=ops" | json "d['objects'][0]['resource_uri']")\"}")
ACCESS=$(printf %s "$cred" | json "d['access_key']")
SECRET=$(printf %s "$cred" | json "d['secret']")
echo "access key $ACCESS (the secret is in this answer only)"
s3tokens() {
  body=$(python3 -c "
import base64, hashlib, hmac, json, sys
sts = b'GET\n\n\nTue, 24 Nov 2026 00:00:00 GMT\n/bucket/object'
sig = base64.b64encode(hmac.new(sys.argv[2].encode(), sts, hashlib.sha1).digest()).decode()
print(json.dumps({'credentials': {'access': sys.argv[1], 'token': base64.urlsafe_b64encode(sts).decode(), 'signature': sig}}))" "$ACCESS" "$1")
  curl -s -o /dev/null -w '%{http_code}\n' -H "X-Auth-Token: $OPS_TOKEN" -H 'Content-Type: application/json' -X POST "$EAST/v3/s3tokens" -d "$body"
}
echo "right secret: $(s3tokens "$SECRET")   wrong secret: $(s3tokens "not-the-secret")"
[ "$(s3tokens "$SECRET")" = 200 ] || { echo 's3tokens refused the right signature' >&2; exit 1; }
# A user holds at most two credentials: delete this one so that the script can run again on the same volumes.
CRED=$(printf %s "$cred" | json "d['resource_uri']")
step "curl -s -H \"\$AUTH\" -X DELETE http://$HOST:8000$CRED -w '%{http_code}'"
deleted=$(curl -s -o /dev/null -w '%{http_code}' -H "$AUTH" -X DELETE "http://$HOST:8000$CRED")
echo "$deleted"
[ "$deleted" = 204 ] || { echo "the S3 credential $CRED was not deleted" >&2; exit 1; }

step "collectors: the operator the migrate job made for east's collector reads east's utilization, not west's"
CKEY=$(in_service management-api-1 cat /run/secrets/cairn/collector-east-api-key | tr -d '\r\n')
ceast=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: ApiKey $CKEY" "$API/clusters/1/utilization/accounts/")
cwest=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: ApiKey $CKEY" "$API/clusters/2/utilization/accounts/")
echo "east: $ceast   west: $cwest"
[ "$ceast" = 200 ] && [ "$cwest" != 200 ] || { echo "the collector's operator is not limited to east" >&2; exit 1; }
collector_logs() { if [ "$EXEC" = podman-exec ]; then podman logs "${COMPOSE_PROJECT_NAME:-main}_collector-east_1" 2>&1; else docker compose logs --no-log-prefix collector-east 2>&1; fi; }
if collector_logs >/dev/null 2>&1 && [ -n "$(collector_logs)" ]; then
  step "collector-east (profile collectors): its first round"
  for _ in $(seq 90); do collector_logs | grep -q 'account(s) sampled' && break; sleep 1; done
  collector_logs | grep -E 'account\(s\) sampled|^error' | tail -n 3
  collector_logs | grep -q 'account(s) sampled' || { echo 'collector-east finished no round' >&2; exit 1; }
else
  echo '(profile collectors not running: skipped)'
fi
