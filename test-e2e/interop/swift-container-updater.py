#!/usr/bin/python3
"""Runs Swift's container updater once against the harness's cluster.

Usage: /usr/bin/python3 swift-container-updater.py <swift_dir> <devices_dir>

The interop cluster runs no background daemons, so containers' object counts and bytes never reach
the account server by themselves; in a real cluster swift-container-updater does that every few
minutes (which is why account stats are eventually consistent). This runs one pass of it, with
swift.conf read from the harness's directory as swift-launcher.py does.
"""
import os
import sys

if len(sys.argv) != 3:
    sys.exit(__doc__)
swift_dir, devices_dir = sys.argv[1:3]

from swift.common import utils  # noqa: E402

utils.SWIFT_CONF_FILE = os.path.join(swift_dir, 'swift.conf')
utils.HASH_PATH_PREFIX = b''
utils.HASH_PATH_SUFFIX = b''
utils.validate_configuration()

from swift.common import constraints, storage_policy  # noqa: E402

storage_policy.reload_storage_policies()
constraints.reload_constraints()

from swift.container.updater import ContainerUpdater  # noqa: E402

ContainerUpdater({
    'devices': devices_dir,
    'mount_check': 'false',
    'swift_dir': swift_dir,
    'account_suppression_time': '0',
    'concurrency': '1',
}).run_once()
sys.stdout.write('container updater: one pass done\n')
