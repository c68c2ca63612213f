import { errors } from '@cairn/domain/errors';
import type { Command } from 'commander';
import { withOutput, type OutputOptions } from '../remote/output';
import { USER_LOOKUP } from '../remote/names';
import { addDelete, addList, addShow, call, idOf, print, withIdArgument, type ResourceView } from '../remote/resource';
import { readSecret } from '../remote/secret';
import { clusterIdOf, collect, collectorConfigOf, targetOf } from '../remote/session';
import type { ImportFlags } from '../users/import-command';

const VIEW: ResourceView = {
  path: '/api/v1/users/',
  noun: 'user',
  columns: ['id', 'user', 'cluster', 'is_superuser', 'enabled'],
  lookup: USER_LOOKUP,
  describe: (u) => `user '${String(u.user)}' (id ${String(u.id)}) of cluster ${String(u.cluster)}`,
};

const QUOTA_VIEW: ResourceView = {
  ...VIEW,
  columns: [
    'id',
    'user',
    'quota_bytes',
    'quota_count',
    'quota_bytes_policy',
    'quota_count_policy',
    'quota_status',
    'quota_error',
    'quota_applied_at',
  ],
};

/**
 * `none` clears a quota (null); otherwise a whole number of bytes or objects, sent as a decimal string (exact past
 * 2^53).
 */
function quotaValue(option: string, value: string): string | null {
  if (value === 'none') return null;
  if (!/^\d{1,19}$/.test(value))
    throw errors.invalidInput(`${option} takes a whole number, or 'none' to clear the quota; '${value}' is neither.`);
  return value;
}

/** Repeated `--bytes-policy gold=<n>` into one map (a PATCH replaces the map whole); `none` alone clears it. */
function policyQuotas(option: string, values: string[] | undefined): Record<string, string | null> | null | undefined {
  if (values === undefined) return undefined;
  if (values.length === 1 && values[0] === 'none') return null;
  const map: Record<string, string | null> = {};
  for (const v of values) {
    const at = v.indexOf('=');
    if (at < 1)
      throw errors.invalidInput(
        `${option} takes <policy>=<number|none> (or 'none' alone to clear them all); '${v}' is not that.`,
      );
    map[v.slice(0, at)] = quotaValue(option, v.slice(at + 1));
  }
  return map;
}

interface QuotaFlags {
  bytes?: string;
  count?: string;
  bytesPolicy?: string[];
  countPolicy?: string[];
}

/** The PATCH body of `users set-quota`: only the quotas named. */
function quotaBody(f: QuotaFlags): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (f.bytes !== undefined) body.quota_bytes = quotaValue('--bytes', f.bytes);
  if (f.count !== undefined) body.quota_count = quotaValue('--count', f.count);
  const bytesPolicy = policyQuotas('--bytes-policy', f.bytesPolicy);
  if (bytesPolicy !== undefined) body.quota_bytes_policy = bytesPolicy;
  const countPolicy = policyQuotas('--count-policy', f.countPolicy);
  if (countPolicy !== undefined) body.quota_count_policy = countPolicy;
  if (Object.keys(body).length === 0)
    throw errors.invalidInput(
      'Say which quota to set: --bytes, --count, --bytes-policy or --count-policy (a number, or none).',
    );
  return body;
}

const password = (flags: { passwordStdin?: boolean }) =>
  readSecret(flags.passwordStdin, 'password', 'Password (at least 20 characters): ', '--password-stdin');

/** A PATCH of one user, printed as the API answers it (never with the password). */
function patch(
  users: Command,
  name: string,
  description: string,
  body: (flags: Record<string, unknown>) => Promise<Record<string, unknown>> | Record<string, unknown>,
  extra: (c: Command) => Command = (c) => c,
): void {
  withIdArgument(extra(withOutput(users.command(name).description(description))), VIEW).action(
    async (given: string, flags: OutputOptions & Record<string, unknown>, cmd: Command) => {
      const target = await targetOf(cmd);
      const id = await idOf(target, VIEW, given, flags);
      const { password: _shown, ...user } = await call(
        target,
        'PATCH',
        `${VIEW.path}${encodeURIComponent(id)}/`,
        `changing user ${given}`,
        202,
        await body(flags),
      );
      await print(user, VIEW, flags);
    },
  );
}

export function registerUsers(program: Command): void {
  const users = program
    .command('users')
    .description("storage users: a cluster's logins, each owning the Swift account AUTH_<user> (management API)");
  addList(
    users,
    VIEW,
    (c) =>
      c
        .option('--cluster <id|name>', "only this cluster (default: the context's)")
        .option('--all-clusters', "every cluster, whatever the context's default"),
    (f, target) => {
      if (f.allClusters && f.cluster !== undefined)
        throw errors.invalidInput('Give --cluster or --all-clusters, not both.');
      const cluster = f.allClusters ? undefined : f.cluster === undefined ? target.cluster : String(f.cluster);
      return cluster ? [[/^\d+$/.test(cluster) ? 'cluster' : 'cluster__name', cluster]] : [];
    },
  );
  addShow(users, VIEW);
  withOutput(
    users
      .command('create')
      .description('create a user; the password comes from a prompt or standard input, never the command line'),
  )
    .requiredOption('--user <name>', 'login name')
    .option('--cluster <id|name>', "the cluster (default: the context's)")
    .option('--superuser', 'ResellerAdmin: access to every account of the cluster')
    .option('--disabled', 'create it disabled')
    .option('--password-stdin', 'read the password from standard input')
    .action(
      async (
        flags: OutputOptions & {
          user: string;
          cluster?: string;
          superuser?: boolean;
          disabled?: boolean;
          passwordStdin?: boolean;
        },
        cmd: Command,
      ) => {
        const target = await targetOf(cmd);
        const cluster = await clusterIdOf(target, flags.cluster);
        const body = {
          cluster,
          user: flags.user,
          password: await password(flags),
          is_superuser: Boolean(flags.superuser),
          enabled: !flags.disabled,
        };
        const { password: _shown, ...user } = await call(target, 'POST', VIEW.path, 'creating the user', 201, body);
        await print(user, VIEW, flags);
      },
    );
  patch(
    users,
    'update',
    'change whether a user is a superuser',
    (f) => {
      if (f.superuser === undefined) throw errors.invalidInput('Say what to change: --superuser or --no-superuser.');
      return { is_superuser: f.superuser };
    },
    (c) => c.option('--superuser', 'make it a superuser').option('--no-superuser', 'make it a normal user'),
  );
  patch(users, 'enable', 'let a user log in again', () => ({ enabled: true }));
  patch(users, 'disable', "stop a user's logins; its tokens stop working at once", () => ({ enabled: false }));
  patch(
    users,
    'set-password',
    "replace a user's password (prompt or --password-stdin); its tokens stop working at once",
    async (f) => ({ password: await password(f) }),
    (c) => c.option('--password-stdin', 'read the password from standard input'),
  );
  patch(
    users,
    'set-quota',
    "set or clear a user's quotas; the quota reconciler applies them to Swift (docs/quotas.md)",
    (f) => quotaBody(f as QuotaFlags),
    (c) =>
      c
        .option('--bytes <n|none>', 'bytes the account may store')
        .option('--count <n|none>', 'objects the account may hold (Swift 2.34 or later)')
        .option(
          '--bytes-policy <policy=n|none>',
          'bytes per storage policy (repeatable; replaces the whole map; Swift 2.32 or later)',
          collect,
        )
        .option(
          '--count-policy <policy=n|none>',
          'objects per storage policy (repeatable; replaces the whole map; Swift 2.34 or later)',
          collect,
        ),
  );
  const quota = withOutput(
    users
      .command('quota')
      .description(
        "show a user's quotas and whether Swift has them: quota_status applied, pending or error (with quota_error)",
      ),
  );
  withIdArgument(quota, VIEW).action(
    async (given: string, flags: OutputOptions & Record<string, unknown>, cmd: Command) => {
      const target = await targetOf(cmd);
      const id = await idOf(target, VIEW, given, flags);
      await print(
        await call(target, 'GET', `${VIEW.path}${encodeURIComponent(id)}/`, `reading user ${given}`, 200),
        QUOTA_VIEW,
        flags,
      );
    },
  );
  addDelete(users, VIEW, ' (the login only; the Swift account and its data stay)', true);
  users
    .command('import')
    .description(
      'create users from a file of existing logins (CSV with a header line, or JSON lines: user, password or password_hash, is_superuser, enabled), or from tempauth; existing names are skipped',
    )
    .argument('[file]', 'the CSV or JSON lines file')
    .requiredOption('--cluster <id|name>', 'the cluster to create them in')
    .option(
      '--tempauth <proxy-server.conf>',
      "read tempauth's user_<account>_<user> lines instead: one user per single-user account, named after it",
    )
    .option('--dry-run', 'say what would happen; change nothing')
    .action(async (file: string | undefined, flags: ImportFlags, cmd: Command) => {
      const config = await collectorConfigOf(cmd);
      // The importer (CSV parser, password hashing, the user schema) loads only for an import.
      return (await import('../users/import-command')).usersImportCommand(config, flags, file);
    });
}
