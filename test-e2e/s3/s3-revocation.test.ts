import request from 'supertest';
import * as gateway from '@cairn/auth-gateway';
import { LogCapture } from '@cairn/runtime';
import { ADMIN_AUTH, REDIS_URL, startStack, type Stack } from '../support/stack';
import { createEc2, S3_KEYS, signedBody, v3Token } from './s3-client';

const PW = 'pw-0123456789-abcdefgh';

/**
 * A credential deleted, or its user disabled or deleted, must fail the very next s3tokens call
 * answered after the write, whoever wrote it: with the gateway hearing change notices (its cache
 * behind the notice fence) and with notices off (every check reads Postgres).
 */
describe.each([
  ['hearing change notices', {}],
  ['with notices off', { userNoticesUrl: 'off' }],
])('S3 credential revocation, %s', (_name, gatewayExtra) => {
  let stack: Stack;
  const check = (access: string, secret: string) =>
    request(stack.gatewayUrl).post('/auth/v3/s3tokens').send(signedBody(access, secret));

  beforeAll(async () => {
    stack = await startStack({
      database: 'postgres',
      redis: true,
      s3SecretKeys: S3_KEYS,
      gateway: { s3tokensRequireServiceToken: false, ...gatewayExtra },
    });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('when a credential is deleted through OS-EC2 or straight in Postgres, then the next check fails, every time', async () => {
    const { id } = await stack.createUser('frank', PW);
    void id;
    const token = await v3Token(stack.gatewayUrl, 'frank', PW);
    for (let round = 0; round < 5; round++) {
      const viaApi = await createEc2(stack.gatewayUrl, token, 'frank');
      expect([round, (await check(viaApi.access, viaApi.secret)).status]).toEqual([round, 200]);
      const del = await request(stack.gatewayUrl)
        .delete(`/auth/v3/users/frank/credentials/OS-EC2/${viaApi.access}`)
        .set('X-Auth-Token', token);
      expect(del.status).toBe(204);
      expect([round, (await check(viaApi.access, viaApi.secret)).status]).toEqual([round, 401]);

      const direct = await createEc2(stack.gatewayUrl, token, 'frank');
      expect([round, (await check(direct.access, direct.secret)).status]).toEqual([round, 200]);
      // Another writer (the management API, an operator's SQL): the gateway hears it or reads it.
      await stack.db('s3_credentials').where({ access_key: direct.access }).delete();
      expect([round, (await check(direct.access, direct.secret)).status]).toEqual([round, 401]);
    }
  });

  it('when the management API creates a credential, then it signs at the gateway; when the API deletes it, then the next check fails', async () => {
    const { id } = await stack.createUser('iris', PW);
    const api = (method: string, path: string, body?: unknown) =>
      fetch(`${stack.apiUrl}${path}`, {
        method,
        headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    for (let round = 0; round < 5; round++) {
      const created = await api('POST', '/api/v1/s3_credentials/', { user: `/api/v1/users/${id}/` });
      expect(created.status).toBe(201);
      const cred = (await created.json()) as { id: string; access_key: string; secret: string };
      expect([round, (await check(cred.access_key, cred.secret)).status]).toEqual([round, 200]);
      expect((await api('DELETE', `/api/v1/s3_credentials/${cred.id}/`)).status).toBe(204);
      expect([round, (await check(cred.access_key, cred.secret)).status]).toEqual([round, 401]);
    }
  });

  it('when the user is disabled, enabled again, then deleted, then the next check follows each change', async () => {
    const { id } = await stack.createUser('gina', PW);
    const cred = await createEc2(stack.gatewayUrl, await v3Token(stack.gatewayUrl, 'gina', PW), 'gina');
    for (let round = 0; round < 5; round++) {
      expect([round, (await check(cred.access, cred.secret)).status]).toEqual([round, 200]);
      expect(await stack.patchUser(id, { enabled: false })).toBe(202);
      expect([round, (await check(cred.access, cred.secret)).status]).toEqual([round, 401]);
      expect(await stack.patchUser(id, { enabled: true })).toBe(202);
    }
    expect((await check(cred.access, cred.secret)).status).toBe(200);
    expect(await stack.deleteUser(id)).toBe(204);
    expect((await check(cred.access, cred.secret)).status).toBe(401);
    // Re-created under the same name: the old credential is gone with the old user.
    await stack.createUser('gina', PW);
    expect((await check(cred.access, cred.secret)).status).toBe(401);
  });

  it('when a credential is deleted through one gateway, then a second gateway of the cluster refuses it on the next check too', async () => {
    const config = {
      ...gateway.readConfig({
        CAIRN_GATEWAY_HOST: '127.0.0.1',
        CAIRN_GATEWAY_PORT: '0',
        DATABASE_URL: stack.databaseUrl!,
        REDIS_URL,
      }),
      s3SecretKeys: S3_KEYS,
      s3tokensRequireServiceToken: false,
      ...gatewayExtra,
    };
    const deps = await gateway.createDeps(config, { log: gateway.createLogger('warn', new LogCapture()) });
    const second = await gateway.startAuthGateway(config, deps);
    try {
      const other = `http://127.0.0.1:${second.port}`;
      await stack.createUser('hugo', PW);
      const token = await v3Token(stack.gatewayUrl, 'hugo', PW);
      for (let round = 0; round < 5; round++) {
        const cred = await createEc2(stack.gatewayUrl, token, 'hugo');
        const onSecond = () => request(other).post('/auth/v3/s3tokens').send(signedBody(cred.access, cred.secret));
        expect([round, (await onSecond()).status]).toEqual([round, 200]);
        expect(
          (
            await request(stack.gatewayUrl)
              .delete(`/auth/v3/users/hugo/credentials/OS-EC2/${cred.access}`)
              .set('X-Auth-Token', token)
          ).status,
        ).toBe(204);
        expect([round, (await onSecond()).status]).toEqual([round, 401]);
      }
    } finally {
      await second.close(0);
    }
  });
});
