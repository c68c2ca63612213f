import request from 'supertest';
import { startStack, type Stack } from '../support/stack';
import { createEc2, S3_KEYS, signedBody, v3Token } from './s3-client';

const PW = 'pw-0123456789-abcdefgh';

/**
 * Wrong S3 signatures count against the access key's owner and are reported past the limit, but
 * never lock anyone out: the access key is public (presigned URLs), the proxy's address stands for
 * every S3 client, and a 240-bit secret cannot be guessed (SECURITY.md, "S3 signatures").
 */
describe('failed S3 signature checks and the login limits', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      database: 'postgres',
      redis: true,
      gateway: {
        s3SecretKeys: S3_KEYS,
        s3tokensRequireServiceToken: false,
        userFailureLimit: 3,
        addressFailureLimit: 5,
        failureLimit: 5,
      },
    });
    await stack.createUser('hank', PW);
    await stack.createUser('ivy', PW);
  });
  afterAll(async () => {
    await stack.close();
  });

  it("when many wrong signatures arrive for one user's key from the proxy's address, then they are counted and reported past the limit, and neither the owner's S3 requests, its password logins nor other users' logins from that address are refused", async () => {
    const hank = await createEc2(stack.gatewayUrl, await v3Token(stack.gatewayUrl, 'hank', PW), 'hank');
    const before = stack.gatewayLogs.lines.length;
    for (let i = 0; i < 12; i++) {
      expect(
        (
          await request(stack.gatewayUrl)
            .post('/auth/v3/s3tokens')
            .send(signedBody(hank.access, `guess-${i}`))
        ).status,
      ).toBe(401);
    }
    const metrics = await request(stack.gatewayUrl).get('/metrics');
    expect(metrics.text).toMatch(
      /cairn_s3_signature_failures_over_limit_total\{limit="user",service="auth-gateway"\} 9\n/,
    );
    const warnings = stack.gatewayLogs.lines.slice(before).filter((l) => l.includes('many wrong S3 signatures'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ user: 'hank', accessKey: hank.access, failures: 4 });

    expect(
      (await request(stack.gatewayUrl).post('/auth/v3/s3tokens').send(signedBody(hank.access, hank.secret))).status,
    ).toBe(200);
    // Password logins from this same address (the proxy's): not limited by the S3 failures.
    expect(await v3Token(stack.gatewayUrl, 'hank', PW)).toBeTruthy();
    expect(await v3Token(stack.gatewayUrl, 'ivy', PW)).toBeTruthy();
  });

  it('when unknown access keys are tried by the hundred, then nothing is counted against anyone and every answer is the same 401', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        request(stack.gatewayUrl)
          .post('/auth/v3/s3tokens')
          .send(signedBody(`AKIA${String(i).padStart(16, '0')}`, 'x'))
          .then((r) => r.status),
      ),
    );
    expect(new Set(statuses)).toEqual(new Set([401]));
    expect(await v3Token(stack.gatewayUrl, 'ivy', PW)).toBeTruthy();
  });
});
