import type { Command } from 'commander';
import { withOutput, type OutputOptions } from '../remote/output';
import { addDelete, addList, call, print, type ResourceView } from '../remote/resource';
import { userIdOf } from '../remote/names';
import { targetOf } from '../remote/session';

const VIEW: ResourceView = {
  path: '/api/v1/s3_credentials/',
  noun: 's3 credential',
  columns: ['id', 'access_key', 'user', 'created_at', 'expires_at'],
};

export function registerS3Credentials(program: Command): void {
  const creds = program.command('s3-credentials').description("storage users' S3 access keys (management API)");
  addList(
    creds,
    VIEW,
    (c) =>
      c
        .option('--user <id|name>', "only this user's")
        .option('--cluster <id|name>', "the user's cluster, when a name is given (default: the context's)"),
    async (f, target) =>
      f.user
        ? [['user', await userIdOf(target, String(f.user), f.cluster === undefined ? undefined : String(f.cluster))]]
        : [],
  );
  withOutput(creds.command('create').description('create an S3 credential for a user; its secret is shown only now'))
    .requiredOption('--user <id|name>', "the storage user's id or name")
    .option('--cluster <id|name>', "the user's cluster, when a name is given (default: the context's)")
    .option('--expires-at <time>', 'when it stops signing, ISO 8601 (2027-01-31T00:00:00Z); default: never')
    .action(async (flags: OutputOptions & { user: string; cluster?: string; expiresAt?: string }, cmd: Command) => {
      const target = await targetOf(cmd);
      const user = await userIdOf(target, flags.user, flags.cluster);
      // The API checks the time (ISO 8601, in the future) and says what is wrong with it.
      const body = { user, ...(flags.expiresAt !== undefined ? { expires_at: flags.expiresAt } : {}) };
      await print(
        await call(target, 'POST', VIEW.path, 'creating the S3 credential', 201, body),
        { ...VIEW, columns: [...VIEW.columns, 'secret'] },
        flags,
      );
    });
  addDelete(creds, VIEW);
}
