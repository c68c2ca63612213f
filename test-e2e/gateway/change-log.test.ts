import knex, { type Knex } from 'knex';
import { createLogger } from '../../services/auth-gateway/src/deps';
import { ChangeLogFeed } from '../../services/auth-gateway/src/credentials/change-log';
import { UserDirectory } from '../../services/auth-gateway/src/credentials/users';
import { S3CredentialDirectory } from '../../services/auth-gateway/src/s3/s3-credentials';
import { startStack, type Stack } from '../support/stack';

const PW = 'heidi-password-0123456789';
/** Long enough that only the change log can make the directories forget a row during a test. */
const REMEMBER_MS = 60_000;

async function until(check: () => Promise<boolean> | boolean, ms = 3000): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`not true within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - start;
}

/**
 * The change log a gateway on a hot standby follows (credentials/change-log.ts), read here on the
 * primary itself: the triggers write it in the changes' own transactions, and the feed drops what
 * each row names, also when commits land out of sequence order.
 */
describe('the change log on postgres', () => {
  let stack: Stack;
  let admin: Knex;
  let users: UserDirectory;
  let s3: S3CredentialDirectory;
  let feed: ChangeLogFeed;

  beforeAll(async () => {
    stack = await startStack({ database: 'postgres', redis: true });
    admin = knex({ client: 'pg', connection: stack.databaseUrl!, pool: { min: 0, max: 3 } });
    users = new UserDirectory(stack.db, 1, REMEMBER_MS);
    s3 = new S3CredentialDirectory(stack.db, 1, REMEMBER_MS);
    feed = new ChangeLogFeed(stack.databaseUrl!, 1, users, createLogger('silent'), { maxLagMs: 5000, s3 });
    await feed.start();
  });
  afterAll(async () => {
    await feed?.close();
    await admin?.destroy();
    await stack?.close();
  });

  it('when a user is created, changed and deleted through the API, then each writes a row naming it, and the feed makes the directory forget it', async () => {
    const { id } = await stack.createUser('heidi', PW);
    expect(users.isFollowing).toBe(true);
    expect(feed.isStandby).toBe(false);
    expect(feed.lagMs).toBe(0);
    expect((await users.findRecent('heidi'))?.enabled).toBe(true);
    expect(await stack.patchUser(id, { enabled: false })).toBe(202);
    const ms = await until(async () => (await users.findRecent('heidi'))?.enabled === false);
    expect(ms).toBeLessThan(1000);
    expect(await stack.deleteUser(id)).toBe(204);
    await until(async () => (await users.findRecent('heidi')) === null);
    const rows = (await admin('change_log').where({ kind: 'user', key: 'heidi' }).orderBy('seq')) as Array<{
      cluster_id: number;
    }>;
    expect(rows.length).toBe(3);
    expect(rows.every((r) => r.cluster_id === 1)).toBe(true);
  });

  it('when a transaction that took an earlier sequence number commits after a later one was read, then its change is still applied', async () => {
    const { id } = await stack.createUser('ivan', PW);
    await stack.createUser('judy', PW);
    const key = 'AKIAIVANIVANIVANIVA1';
    // Remembered: no such credential.
    expect(await s3.find(key)).toBeNull();
    const early = await admin.transaction();
    try {
      // Takes its number first, commits last (user changes of one cluster queue on its counters:
      // an S3 credential's insert does not).
      await early('s3_credentials').insert({ storage_user_id: id, access_key: key, secret_sealed: 'v1:k:iv:ct:tag' });
      await admin('storage_users').where({ username: 'judy' }).update({ enabled: false });
      await until(async () => (await users.findRecent('judy'))?.enabled === false);
      // Read past the credential's number while it was not visible yet.
      await new Promise((r) => setTimeout(r, 400));
      expect(await s3.find(key)).toBeNull();
      await early.commit();
    } catch (e) {
      await early.rollback();
      throw e;
    }
    const ms = await until(async () => (await s3.find(key))?.accessKey === key);
    expect(ms).toBeLessThan(1000);
  });

  it('when an S3 credential is deleted, then the credential directory forgets it', async () => {
    const { id } = await stack.createUser('kim', PW);
    await admin('s3_credentials').insert({
      storage_user_id: id,
      access_key: 'AKIAKIMKIMKIMKIMKIM1',
      secret_sealed: 'v1:k:iv:ct:tag',
    });
    expect((await s3.read('AKIAKIMKIMKIMKIMKIM1'))?.accessKey).toBe('AKIAKIMKIMKIMKIMKIM1');
    await admin('s3_credentials').where({ access_key: 'AKIAKIMKIMKIMKIMKIM1' }).delete();
    await until(async () => (await s3.read('AKIAKIMKIMKIMKIMKIM1')) === null);
    expect(
      await admin('change_log').where({ kind: 's3_credential', key: 'AKIAKIMKIMKIMKIMKIM1' }).count({ n: '*' }).first(),
    ).toEqual({ n: '2' });
  });

  it('when a cluster row changes, then it is logged under its id', async () => {
    const count = async () =>
      Number(
        (
          (await admin('change_log').where({ kind: 'cluster', cluster_id: 1 }).count({ n: '*' }).first()) as {
            n: string;
          }
        ).n,
      );
    const before = await count();
    await admin('clusters').where({ id: 1 }).update({ region: 'RegionTwo' });
    expect(await count()).toBe(before + 1);
  });
});
