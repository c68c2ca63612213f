#!/bin/sh
# Installs what the interop harness (swift-cluster.ts) needs: a real OpenStack Swift (Debian packages),
# python-swiftclient's `swift` CLI, keystonemiddleware for the keystone proxy pipeline, memcached,
# the S3 clients (awscli, boto3/botocore, s3cmd) that sign requests for Swift's s3api, and the
# OpenStack client (`openstack ec2 credentials ...` against the gateway's OS-EC2 API), and rclone
# (its swift backend logging in with application credentials), and curl (temporary URLs as a
# browser-less client fetches them).
# Idempotent: apt-get runs only when a package is missing. Debian/Ubuntu only; run as root (or with sudo).
set -eu

PACKAGES="python3-swiftclient swift swift-proxy swift-account swift-container swift-object python3-keystonemiddleware memcached python3-boto3 awscli s3cmd python3-openstackclient python3-passlib rclone curl"

missing=""
for p in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing="$missing $p"
  fi
done

if [ -z "$missing" ]; then
  echo "install-swift: all packages present"
  exit 0
fi

echo "install-swift: installing$missing"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null

# The packages enable system services (memcached on 11211, maybe swift daemons). The harness runs
# its own processes on free ports and never needs them; stop the ones that autostarted where
# that is possible (no-op in containers without an init system).
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  $SUDO systemctl disable --now memcached >/dev/null 2>&1 || true
fi
echo "install-swift: done"
exit 0
