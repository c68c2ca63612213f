import request from 'supertest';
import { startStack, type Stack } from '../support/stack';
import {
  createEc2,
  S3_KEYS,
  s3tokensBody,
  signedBody,
  signV2,
  signV4,
  v2StringToSign,
  v3Token,
  v4StringToSign,
  type Ec2Credential,
} from './s3-client';

const PW = 'pw-0123456789-abcdefgh';

/**
 * `POST /auth/v3/s3tokens` as Swift's s3token middleware calls it (auth_uri = <gateway>/auth/v3),
 * over HTTP against real Postgres and Redis, with signatures computed here from the secret the
 * OS-EC2 API handed out.
 */
describe('s3tokens, with the service token required (the default)', () => {
  let stack: Stack;
  let service: string;
  let alice: Ec2Credential;
  let aliceToken: string;
  /** `token` null: none sent. */
  const s3tokens = (body: unknown, token: string | null = service) => {
    const r = request(stack.gatewayUrl).post('/auth/v3/s3tokens');
    if (token !== null) r.set('X-Auth-Token', token);
    return r.send(body as object);
  };

  beforeAll(async () => {
    // Trace: every line the gateway can write is written, and checked for secrets below.
    stack = await startStack({
      database: 'postgres',
      redis: true,
      gateway: { s3SecretKeys: S3_KEYS },
      logLevel: 'trace',
    });
    await stack.createUser('s3-service', PW, { is_superuser: true });
    await stack.createUser('alice', PW);
    service = await v3Token(stack.gatewayUrl, 's3-service', PW);
    aliceToken = await v3Token(stack.gatewayUrl, 'alice', PW);
    alice = await createEc2(stack.gatewayUrl, aliceToken, 'alice');
  });
  afterAll(async () => {
    await stack.close();
  });

  it.each(['v2', 'v4'] as const)(
    'when the proxy posts a right %s signature, then it gets 200 and a V3 document naming alice, her project and swiftoperator',
    async (version) => {
      const res = await s3tokens(signedBody(alice.access, alice.secret, version));
      expect(res.status).toBe(200);
      expect(res.body.token).toMatchObject({
        methods: ['ec2credential'],
        user: { id: 'alice', name: 'alice', domain: { id: 'default', name: 'default' } },
        project: { id: 'alice', name: 'alice', domain: { id: 'default', name: 'default' } },
        roles: [{ id: 'swiftoperator', name: 'swiftoperator' }],
      });
    },
  );

  it.each(['credentials', 'credential', 'ec2Credentials'] as const)(
    'when the body spells its object %s, then it is read the same',
    async (spelling) => {
      expect((await s3tokens(signedBody(alice.access, alice.secret, 'v4', spelling))).status).toBe(200);
      expect((await s3tokens(signedBody(alice.access, 'wrong-secret', 'v4', spelling))).status).toBe(401);
    },
  );

  it('when the path has a trailing slash, then it is the same endpoint', async () => {
    const res = await request(stack.gatewayUrl)
      .post('/auth/v3/s3tokens/')
      .set('X-Auth-Token', service)
      .send(signedBody(alice.access, alice.secret));
    expect(res.status).toBe(200);
  });

  it('when an answer is 200, then nothing in it validates as a token: no X-Subject-Token, and no string of the body is accepted as X-Auth-Token or X-Subject-Token', async () => {
    const res = await s3tokens(signedBody(alice.access, alice.secret));
    expect(res.status).toBe(200);
    expect(res.headers['x-subject-token']).toBeUndefined();
    expect(res.headers['x-auth-token']).toBeUndefined();
    const strings = new Set<string>();
    const walk = (v: unknown): void => {
      if (typeof v === 'string') strings.add(v);
      else if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') Object.values(v).forEach(walk);
    };
    walk(res.body);
    expect(strings.size).toBeGreaterThan(3);
    for (const s of strings) {
      const validate = await request(stack.gatewayUrl)
        .get('/auth/v3/auth/tokens')
        .set('X-Auth-Token', service)
        .set('X-Subject-Token', s);
      expect([s, validate.status]).toEqual([s, 404]);
      const asCaller = await request(stack.gatewayUrl)
        .get('/auth/v3/auth/tokens')
        .set('X-Auth-Token', s)
        .set('X-Subject-Token', service);
      expect([s, asCaller.status]).toEqual([s, 401]);
    }
  });

  it("when the access key is unknown, the signature wrong, or the string to sign altered, then each is the same 401 in Keystone's shape", async () => {
    const sts = v4StringToSign();
    const answers = await Promise.all([
      s3tokens(s3tokensBody('AKIAUNKNOWN000000000', sts, signV4(alice.secret, sts))),
      s3tokens(s3tokensBody(alice.access, sts, signV4(`${alice.secret}x`, sts))),
      // Its last hex digit changed: replaced by '0', a string that ended in '0' (one in 16) stayed the same.
      s3tokens(
        s3tokensBody(alice.access, `${sts.slice(0, -1)}${sts.endsWith('0') ? '1' : '0'}`, signV4(alice.secret, sts)),
      ),
      s3tokens(s3tokensBody(alice.access, v2StringToSign(), signV2('nope', v2StringToSign()))),
    ]);
    for (const res of answers) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' },
      });
    }
  });

  it("when no service token, a bad one, or a normal user's is sent, then 401, 401 and 403, before the signature is looked at", async () => {
    const body = signedBody(alice.access, alice.secret);
    expect((await s3tokens(body, null)).status).toBe(401);
    expect((await s3tokens(body, 'garbage')).status).toBe(401);
    const res = await s3tokens(body, aliceToken);
    expect(res.status).toBe(403);
    expect(res.body.error.message).toMatch(/s3tokens/);
  });

  it('when the body is garbage, huge, not JSON or lacks a field, then 400 or 413 with a sentence, never a 500', async () => {
    const post = (body: string, type = 'application/json') =>
      request(stack.gatewayUrl)
        .post('/auth/v3/s3tokens')
        .set('X-Auth-Token', service)
        .set('Content-Type', type)
        .send(body);
    for (const body of [
      '{',
      'null',
      '[]',
      '"x"',
      '{}',
      '{"credentials": {}}',
      '{"credentials": {"access": "A"}}',
      '{"credentials": {"access": "A", "token": "!!!", "signature": "s"}}',
      '{"credentials": {"access": 5, "token": "QQ", "signature": "s"}}',
    ]) {
      const res = await post(body);
      expect([body, res.status]).toEqual([body, 400]);
      expect(res.body.error.message.length).toBeGreaterThan(20);
    }
    const huge = await post(
      JSON.stringify({ credentials: { access: 'A', token: 'Q'.repeat(70 * 1024), signature: 's' } }),
    );
    expect(huge.status).toBe(413);
    const v4bad = await post(JSON.stringify(s3tokensBody(alice.access, 'AWS4-HMAC-SHA256\nnot-a-date\nx\ny', 'sig')));
    expect(v4bad.status).toBe(400);
  });

  it('when any method but POST is used, then 405 with Allow: POST', async () => {
    const res = await request(stack.gatewayUrl).get('/auth/v3/s3tokens').set('X-Auth-Token', service);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
  });

  it('when a superuser signs, then its roles are those of its password tokens: swiftoperator and ResellerAdmin', async () => {
    const cred = await createEc2(stack.gatewayUrl, service, 's3-service');
    const res = await s3tokens(signedBody(cred.access, cred.secret, 'v2'));
    expect(res.status).toBe(200);
    expect(res.body.token.roles.map((r: { name: string }) => r.name)).toEqual(['swiftoperator', 'ResellerAdmin']);
  });

  it('when calls were made, then /metrics counts them by result, and no secret, signature, sealed secret or key reached the log', async () => {
    const sts = v4StringToSign();
    const signature = signV4(alice.secret, sts);
    expect((await s3tokens(s3tokensBody(alice.access, sts, signature))).status).toBe(200);
    const sealed = (
      (await stack.db('s3_credentials').where({ access_key: alice.access }).first('secret_sealed')) as {
        secret_sealed: string;
      }
    ).secret_sealed;
    const metrics = await request(stack.gatewayUrl).get('/metrics');
    expect(metrics.text).toMatch(/cairn_s3tokens_total\{result="valid",service="auth-gateway"\} [1-9]/);
    expect(metrics.text).toMatch(/cairn_s3tokens_total\{result="signature_mismatch",service="auth-gateway"\} [1-9]/);
    expect(metrics.text).toMatch(/cairn_s3tokens_total\{result="unknown_access_key",service="auth-gateway"\} [1-9]/);
    expect(metrics.text).toMatch(/cairn_s3tokens_total\{result="service_forbidden",service="auth-gateway"\} [1-9]/);
    const logs = stack.gatewayLogs.lines.join('\n');
    expect(logs).toContain('/auth/v3/s3tokens');
    for (const secret of [alice.secret, signature, sealed, S3_KEYS.split(':')[1]!, PW])
      expect(logs).not.toContain(secret);
    expect(logs).not.toContain(alice.secret.slice(0, 12));
  });
});

describe('s3tokens, with the service token not required (a Swift whose s3token sends none)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      database: 'postgres',
      redis: true,
      gateway: { s3SecretKeys: S3_KEYS, s3tokensRequireServiceToken: false },
    });
    await stack.createUser('bob', PW);
  });
  afterAll(async () => {
    await stack.close();
  });

  it('when the proxy posts without X-Auth-Token, then a right signature gets 200 and a wrong one 401', async () => {
    const bob = await createEc2(stack.gatewayUrl, await v3Token(stack.gatewayUrl, 'bob', PW), 'bob');
    const ok = await request(stack.gatewayUrl)
      .post('/auth/v3/s3tokens')
      .send(signedBody(bob.access, bob.secret, 'v4'));
    expect(ok.status).toBe(200);
    expect(ok.body.token.user.name).toBe('bob');
    const bad = await request(stack.gatewayUrl)
      .post('/auth/v3/s3tokens')
      .send(signedBody(bob.access, 'not-the-secret', 'v4'));
    expect(bad.status).toBe(401);
  });
});
