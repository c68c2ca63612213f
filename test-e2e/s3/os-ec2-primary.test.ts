import { createServer } from 'node:net';
import request from 'supertest';
import { startStack, type Stack } from '../support/stack';
import { S3_KEYS, signedBody, v3Token } from './s3-client';

const PW = 'pw-0123456789-abcdefgh';

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const base = (user: string) => `/auth/v3/users/${encodeURIComponent(user)}/credentials/OS-EC2`;

/**
 * A gateway reading a standby sends its writes (OS-EC2 credentials and their audit records) to the
 * primary named by CAIRN_PRIMARY_DATABASE_URL; logins and validations never need it.
 */
describe('the gateway writes through CAIRN_PRIMARY_DATABASE_URL', () => {
  describe('when the primary is unreachable', () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startStack({
        database: 'postgres',
        redis: true,
        s3SecretKeys: S3_KEYS,
        gateway: {
          s3tokensRequireServiceToken: false,
          primaryDatabaseUrl: `postgres://postgres@127.0.0.1:${await closedPort()}/postgres`,
        },
      });
      await stack.createUser('erin', PW);
    });
    afterAll(async () => {
      await stack.close();
    });

    it('when a user logs in and creates an S3 credential, then the login and its validation succeed, the creation is a 503 that says why, and nothing is written', async () => {
      const token = await v3Token(stack.gatewayUrl, 'erin', PW);
      const v1 = await request(stack.gatewayUrl).get('/auth/v1.0').set('X-Auth-User', 'erin').set('X-Auth-Key', PW);
      expect(v1.status).toBe(200);
      const validated = await request(stack.gatewayUrl)
        .get('/auth/v3/auth/tokens')
        .set('X-Auth-Token', token)
        .set('X-Subject-Token', token);
      expect(validated.status).toBe(200);

      const created = await request(stack.gatewayUrl)
        .post(base('erin'))
        .set('X-Auth-Token', token)
        .send({ tenant_id: 'erin' });
      expect(created.status).toBe(503);
      expect(created.body.error.message).toMatch(
        /primary database .* unreachable .* logins and tokens are not affected/,
      );
      expect((await request(stack.gatewayUrl).get(base('erin')).set('X-Auth-Token', token)).status).toBe(503);
      expect(await stack.db('s3_credentials').count({ n: '*' }).first()).toEqual({ n: '0' });
      expect(await stack.db('audit_log').where('target_type', 's3_credentials').count({ n: '*' }).first()).toEqual({
        n: '0',
      });
    });
  });

  describe('when the primary is reachable through its own URL', () => {
    let stack: Stack;
    beforeAll(async () => {
      // The same database under another spelling: the gateway opens a handle of its own for writes.
      const primaryOf = (url?: string) => {
        const primary = new URL(url!);
        primary.searchParams.set('application_name', 'cairn-test-primary');
        return primary.toString();
      };
      stack = await startStack({
        database: 'postgres',
        redis: true,
        s3SecretKeys: S3_KEYS,
        gateway: (url) => ({ s3tokensRequireServiceToken: false, primaryDatabaseUrl: primaryOf(url) }),
      });
      await stack.createUser('frank', PW);
    });
    afterAll(async () => {
      await stack.close();
    });

    it('when a user creates an S3 credential, then it is written there with its audit record', async () => {
      expect(stack.gatewayDeps.ownsPrimaryDb).toBe(true);
      expect(stack.gatewayDeps.primaryDb).not.toBe(stack.gatewayDeps.db);
      const token = await v3Token(stack.gatewayUrl, 'frank', PW);
      const created = await request(stack.gatewayUrl)
        .post(base('frank'))
        .set('X-Auth-Token', token)
        .send({ tenant_id: 'frank' });
      expect(created.status).toBe(201);
      const { access, secret } = created.body.credential as { access: string; secret: string };
      expect(
        await stack
          .db('audit_log')
          .where({ target_type: 's3_credentials', target_name: access })
          .count({ n: '*' })
          .first(),
      ).toEqual({ n: '1' });
      expect((await request(stack.gatewayUrl).post('/auth/v3/s3tokens').send(signedBody(access, secret))).status).toBe(
        200,
      );
    });
  });
});
