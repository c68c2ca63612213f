#!/usr/bin/python3
"""Starts one Swift WSGI server or daemon with swift.conf read from the harness's own swift_dir.

Usage: /usr/bin/python3 swift-launcher.py <swift_dir> <what> <server.conf> [once]
  what: account | container | object | proxy (a WSGI server, as /usr/bin/swift-<what>-server)
        object-replicator | container-replicator | account-replicator | object-updater |
        object-auditor (a daemon, as /usr/bin/swift-<what>; it reads its [<what>] section of
        <server.conf>; with `once`, one pass and exit, as `swift-<what> --once`)
        recon-cron (one run of /usr/bin/swift-recon-cron <server.conf>: counts async pendings
        into the recon cache; always once)

Why this exists: a server's `swift_dir` setting only moves where rings (and memcache.conf) are read
from. Storage policies, the hash path prefix/suffix and constraints are always read from
`swift.common.utils.SWIFT_CONF_FILE`, hard-wired to /etc/swift/swift.conf, and the Debian `swift`
package installs its own /etc/swift/swift.conf (hash "changeme", one policy "Policy-0"). Writing
that file would clobber a machine-wide file that other tools and tests (or a real node) may rely
on; creating it "only when absent" does not work either because the package already put one there.
So we point Swift's config loader at our copy *before* any module that reads it at import time
(storage_policy, constraints) is imported, then hand over to Swift's own `run_wsgi`, exactly like
/usr/bin/swift-<type>-server does.

With SWIFT_LAUNCHER_WAIT_FOR=<file> in the environment, it imports Swift's modules and then waits
for that file to exist before it loads rings or the server: the harness starts every process while
it still builds the rings, and creates the file once they are all written, so that the imports
(seconds of CPU each) overlap the ring building.
"""
import importlib
import os
import sys
import time

SERVERS = ('account', 'container', 'object', 'proxy')
DAEMONS = ('object-replicator', 'container-replicator', 'account-replicator', 'object-updater',
           'object-auditor')
RECON_CRON = '/usr/bin/swift-recon-cron'
if (len(sys.argv) not in (4, 5) or sys.argv[2] not in SERVERS + DAEMONS + ('recon-cron',)
        or sys.argv[4:] not in ([], ['once'])):
    sys.exit(__doc__)
swift_dir, server_type, conf_file = sys.argv[1:4]
once = sys.argv[4:] == ['once']
swift_conf = os.path.join(swift_dir, 'swift.conf')
if not os.path.isfile(swift_conf):
    sys.exit('swift-launcher: %s does not exist' % swift_conf)

# swift.common.utils does not import storage_policy or constraints, so patching it first is enough.
from swift.common import utils  # noqa: E402

utils.SWIFT_CONF_FILE = swift_conf
utils.HASH_PATH_PREFIX = b''
utils.HASH_PATH_SUFFIX = b''
utils.validate_configuration()  # reads [swift-hash] from our file; exits with a message if missing

from swift.common import constraints, storage_policy  # noqa: E402

# Both modules load at import time (now from our file); reload anyway in case something imported
# them earlier (e.g. a future Swift importing them from utils).
storage_policy.reload_storage_policies()
constraints.reload_constraints()

from swift.common.middleware import recon  # noqa: E402

recon.SWIFT_CONF_FILE = swift_conf  # /recon/swiftconfmd5 should hash the file actually in use

if server_type == 'recon-cron':
    import runpy  # noqa: E402

    # The script itself, as cron runs it; it reads [filter:recon] of <server.conf>.
    sys.argv = [RECON_CRON, conf_file]
    runpy.run_path(RECON_CRON, run_name='__main__')
    sys.exit(0)


def wait_for_rings(module):
    """Imports the module that will run, then waits for SWIFT_LAUNCHER_WAIT_FOR (when set)."""
    importlib.import_module(module)
    marker = os.environ.get('SWIFT_LAUNCHER_WAIT_FOR')
    if not marker:
        return
    deadline = time.time() + 300
    while not os.path.exists(marker):
        if time.time() > deadline:
            sys.exit('swift-launcher: %s did not appear within 300 s' % marker)
        time.sleep(0.05)


if server_type in DAEMONS:
    from swift.common.daemon import run_daemon  # noqa: E402

    if server_type == 'object-replicator':
        from swift.obj.replicator import ObjectReplicator as klass  # noqa: E402
    elif server_type == 'container-replicator':
        from swift.container.replicator import ContainerReplicator as klass  # noqa: E402
    elif server_type == 'account-replicator':
        from swift.account.replicator import AccountReplicator as klass  # noqa: E402
    elif server_type == 'object-updater':
        from swift.obj.updater import ObjectUpdater as klass  # noqa: E402
    else:
        from swift.obj.auditor import ObjectAuditor as klass  # noqa: E402
    wait_for_rings(klass.__module__)
    sys.stdout.write('swift-launcher: %s%s using %s\n' % (server_type, ' (once)' if once else '', swift_conf))
    sys.stdout.flush()
    # As /usr/bin/swift-<what> [--once]: without once, passes forever, `interval` apart.
    sys.exit(run_daemon(klass, conf_file, once=once))

from swift.common.wsgi import run_wsgi  # noqa: E402

wait_for_rings('swift.obj.server' if server_type == 'object' else 'swift.%s.server' % server_type)

kwargs = {}
if server_type == 'object':
    from swift.obj import server as object_server  # noqa: E402

    kwargs['global_conf_callback'] = object_server.global_conf_callback

sys.stdout.write('swift-launcher: %s-server using %s, policies %s\n' % (
    server_type, swift_conf,
    ', '.join('%d=%s' % (p.idx, p.name) for p in storage_policy.POLICIES)))
sys.stdout.flush()
sys.exit(run_wsgi(conf_file, '%s-server' % server_type, **kwargs))
