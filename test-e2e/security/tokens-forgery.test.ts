import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import jwt from 'jsonwebtoken';
import * as gateway from '@cairn/auth-gateway';
import { ADMIN_AUTH, REDIS_URL, startStack, type Stack } from '../support/stack';
import { login, send, tokenOf } from './client';

/**
 * Forged, re-signed and otherwise doctored tokens against the real gateway (Postgres + Redis).
 * The signing key is configured, so the test can build tokens that a careless verifier would take:
 * right key but wrong algorithm, right signature but edited claims, a good token of another
 * cluster, an expired one, one whose record is gone. Every one must be refused: 404 as the subject
 * of a validation (V3 and V2), 401 as the caller's own token.
 */
const SIGNING_KEY = 'forgery-test-signing-key-0123456789abcdef';
const PW = 'alice-password-0123456789';
const SERVICE_PW = 'service-password-0123456789';

const b64url = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** A JWT with any header, signed (or not) by hand. */
function rawJwt(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  sign?: { hash: 'sha256' | 'sha384' | 'sha512'; key: string },
): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  const signature = sign ? createHmac(sign.hash, sign.key).update(input).digest('base64url') : '';
  return `${input}.${signature}`;
}

describe('forged and doctored tokens', () => {
  let stack: Stack;
  let url: string;
  let serviceToken: string;
  let aliceToken: string;
  let claims: { jti: string; aud: string; iat: number; exp: number };
  let uuid: string;

  const validateV3 = (subject: string, caller = serviceToken) =>
    send(url, '/auth/v3/auth/tokens', { headers: { 'X-Auth-Token': caller, 'X-Subject-Token': subject } });
  const validateV2 = (subject: string, caller = serviceToken) =>
    send(url, `/auth/v2.0/tokens/${encodeURIComponent(subject)}`, { headers: { 'X-Auth-Token': caller } });

  /** Refused everywhere: 404 as a subject (V3 GET, HEAD, V2), 401 as the caller (V3, V2, V1 revocation). */
  async function expectRefused(token: string): Promise<void> {
    const v3 = await validateV3(token);
    expect(v3.status).toBe(404);
    expect(JSON.parse(v3.text)).toEqual({
      error: { code: 404, message: 'Failed to validate token', title: 'Not Found' },
    });
    expect(
      (
        await send(url, '/auth/v3/auth/tokens', {
          method: 'HEAD',
          headers: { 'X-Auth-Token': serviceToken, 'X-Subject-Token': token },
        })
      ).status,
    ).toBe(404);
    expect((await validateV2(token)).status).toBe(404);
    expect((await validateV3(aliceToken, token)).status).toBe(401);
    expect((await validateV2(aliceToken, token)).status).toBe(401);
    expect(
      (
        await send(url, '/auth/v3/auth/tokens', {
          method: 'DELETE',
          headers: { 'X-Auth-Token': token, 'X-Subject-Token': aliceToken },
        })
      ).status,
    ).toBe(401);
    expect(
      (await send(url, '/auth/v1.0/users/alice/token', { method: 'DELETE', headers: { 'X-Auth-Token': token } }))
        .status,
    ).toBe(401);
  }

  beforeAll(async () => {
    stack = await startStack({ redis: true, gateway: { signingKey: SIGNING_KEY } });
    url = stack.gatewayUrl;
    uuid = stack.gatewayDeps.cluster.uuid;
    await stack.createUser('alice', PW);
    await stack.createUser('swift-service', SERVICE_PW, { is_superuser: true });
    serviceToken = tokenOf('v3', await login(url, 'v3', 'swift-service', SERVICE_PW));
    aliceToken = tokenOf('v1', await login(url, 'v1', 'alice', PW));
    claims = jwt.decode(aliceToken) as typeof claims;
  });
  afterAll(() => stack.close());

  it('when the genuine tokens are used, then they validate (so every refusal below is the forgery’s doing)', async () => {
    expect((await validateV3(aliceToken)).status).toBe(200);
    expect((await validateV2(aliceToken)).status).toBe(200);
    expect((await validateV3(aliceToken, aliceToken)).status).toBe(200);
    // The same claims re-signed by hand with the real key and HS256 are accepted: the builder is right.
    const resigned = rawJwt({ alg: 'HS256', typ: 'JWT' }, claims, { hash: 'sha256', key: SIGNING_KEY });
    expect((await validateV3(resigned)).status).toBe(200);
  });

  it('when tokens are issued, then each jti carries at least 128 random bits and none repeats', async () => {
    const jtis = new Set<string>();
    // V3: every login is issued a new token (V1 hands the live one out again, as tempauth does).
    for (let i = 0; i < 100; i++) {
      const { jti } = jwt.decode(tokenOf('v3', await login(url, 'v3', 'alice', PW))) as { jti: string };
      expect(Buffer.from(jti, 'base64url').length).toBeGreaterThanOrEqual(16);
      jtis.add(jti);
    }
    expect(jtis.size).toBe(100);
  });

  it("when a live token's claims are signed with another key, then it is refused", async () => {
    await expectRefused(
      jwt.sign(claims, 'another-key-another-key-another-key-0123', { algorithm: 'HS256', noTimestamp: true }),
    );
  });

  it("when a live token's claims come with alg none (no signature, or the real signature kept), then it is refused", async () => {
    await expectRefused(rawJwt({ alg: 'none', typ: 'JWT' }, claims));
    await expectRefused(rawJwt({ alg: 'none', typ: 'JWT' }, claims, { hash: 'sha256', key: SIGNING_KEY }));
    await expectRefused(rawJwt({ alg: 'None' }, claims));
  });

  it('when the header names another algorithm (HS384, HS512, RS256, ES256, PS256) with a signature made with the real key, then it is refused', async () => {
    await expectRefused(rawJwt({ alg: 'HS384', typ: 'JWT' }, claims, { hash: 'sha384', key: SIGNING_KEY }));
    await expectRefused(rawJwt({ alg: 'HS512', typ: 'JWT' }, claims, { hash: 'sha512', key: SIGNING_KEY }));
    // Algorithm confusion: an asymmetric algorithm named, an HMAC made with the (secret) key.
    for (const alg of ['RS256', 'ES256', 'PS256'])
      await expectRefused(rawJwt({ alg, typ: 'JWT' }, claims, { hash: 'sha256', key: SIGNING_KEY }));
  });

  it('when the payload is edited and the original signature kept, then it is refused', async () => {
    const [head, , signature] = aliceToken.split('.') as [string, string, string];
    const edits: Array<Record<string, unknown>> = [
      { ...claims, exp: claims.exp + 3600 },
      { ...claims, jti: `${claims.jti.slice(0, -1)}${claims.jti.endsWith('A') ? 'B' : 'A'}` },
      { ...claims, aud: randomUUID() },
      { ...claims, admin: true },
    ];
    for (const payload of edits) await expectRefused(`${head}.${b64url(payload)}.${signature}`);
    // The signature edited instead, and the token's parts shuffled or truncated.
    await expectRefused(`${aliceToken.slice(0, -2)}${aliceToken.endsWith('AA') ? 'BB' : 'AA'}`);
    await expectRefused(aliceToken.split('.').slice(0, 2).join('.'));
    await expectRefused(`${aliceToken}.`);
  });

  it('when a token correctly signed with the real key names another cluster as its audience, then it is refused', async () => {
    await expectRefused(
      jwt.sign({ jti: claims.jti, aud: randomUUID() }, SIGNING_KEY, { algorithm: 'HS256', expiresIn: 3600 }),
    );
    const { aud: _dropped, ...noAudience } = claims;
    await expectRefused(jwt.sign(noAudience, SIGNING_KEY, { algorithm: 'HS256', noTimestamp: true }));
  });

  it('when a real token of another cluster whose gateway shares the signing key and has a user of the same name is presented, then it is refused', async () => {
    const created = await fetch(`${stack.apiUrl}/api/v1/clusters/`, {
      method: 'POST',
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'other', auth_url: 'http://other.test/auth', storage_url: 'http://other.test/v1' }),
    });
    expect(created.status).toBe(201);
    const { id: otherId } = (await created.json()) as { id: number };
    const user = await fetch(`${stack.apiUrl}/api/v1/users/`, {
      method: 'POST',
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({ cluster: `/api/v1/clusters/${otherId}/`, user: 'alice', password: PW }),
    });
    expect(user.status).toBe(201);
    const config = {
      ...gateway.readConfig({ CAIRN_GATEWAY_HOST: '127.0.0.1', CAIRN_GATEWAY_PORT: '0', REDIS_URL }),
      cluster: 'other',
      signingKey: SIGNING_KEY,
    };
    const deps = await gateway.createDeps(config, { db: stack.db, log: gateway.createLogger('silent') });
    const other = await gateway.startAuthGateway(config, deps);
    try {
      const otherUrl = `http://127.0.0.1:${other.port}`;
      const foreign = tokenOf('v1', await login(otherUrl, 'v1', 'alice', PW));
      expect((jwt.decode(foreign) as { aud: string }).aud).not.toBe(uuid);
      // Good at home…
      expect(
        (
          await send(otherUrl, '/auth/v3/auth/tokens', {
            headers: { 'X-Auth-Token': foreign, 'X-Subject-Token': foreign },
          })
        ).status,
      ).toBe(200);
      // …refused here.
      await expectRefused(foreign);
    } finally {
      await other.close();
    }
  });

  it('when a token correctly signed with the real key has expired, then it is refused, even with a live record', async () => {
    const now = Math.floor(Date.now() / 1000);
    await expectRefused(
      jwt.sign({ jti: claims.jti, aud: uuid, iat: now - 7200, exp: now - 3600 }, SIGNING_KEY, { algorithm: 'HS256' }),
    );
    await expectRefused(
      jwt.sign({ jti: claims.jti, aud: uuid, iat: now - 120, exp: now - 1 }, SIGNING_KEY, { algorithm: 'HS256' }),
    );
  });

  it('when a token is correctly signed with the real key but no record exists for it in Redis, then it is refused', async () => {
    // A jti that was never issued…
    await expectRefused(
      jwt.sign({ jti: randomBytes(16).toString('base64url'), aud: uuid }, SIGNING_KEY, {
        algorithm: 'HS256',
        expiresIn: 3600,
      }),
    );
    // …and a real token whose record has gone from Redis (expired there, or evicted).
    const token = tokenOf('v3', await login(url, 'v3', 'alice', PW));
    expect((await validateV3(token)).status).toBe(200);
    const { jti } = jwt.decode(token) as { jti: string };
    const redis = new Redis(REDIS_URL);
    try {
      expect(await redis.del(`cairn:${uuid}:tok:${jti}`)).toBe(1);
    } finally {
      redis.disconnect();
    }
    await expectRefused(token);
  });

  it('when a token without a jti, or with a non-string jti, is correctly signed, then it is refused', async () => {
    await expectRefused(jwt.sign({ aud: uuid }, SIGNING_KEY, { algorithm: 'HS256', expiresIn: 3600 }));
    await expectRefused(jwt.sign({ jti: 12345, aud: uuid }, SIGNING_KEY, { algorithm: 'HS256', expiresIn: 3600 }));
    await expectRefused(
      jwt.sign({ jti: { $gt: '' }, aud: uuid }, SIGNING_KEY, { algorithm: 'HS256', expiresIn: 3600 }),
    );
  });
});
