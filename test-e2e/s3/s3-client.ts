import { createHash, createHmac, randomBytes } from 'node:crypto';
import request from 'supertest';

/**
 * What a Swift proxy's s3api + s3token would post to /auth/v3/s3tokens for an S3 request, built
 * here from the secret as an S3 client signs: V2 (HMAC-SHA1 of the string to sign) and V4 (the
 * chained HMAC-SHA256 signing key). Written out independently of packages/domain, so a mistake
 * there cannot hide here.
 */
export const S3_KEYS = `k1:${randomBytes(32).toString('base64')}`;

export function v2StringToSign(path = '/bucket/object'): string {
  return `GET\n\n\n${new Date().toUTCString()}\n${path}`;
}

export function signV2(secret: string, stringToSign: string): string {
  return createHmac('sha1', secret).update(stringToSign, 'utf8').digest('base64');
}

export function v4StringToSign(region = 'RegionOne', path = '/bucket/object'): string {
  const now = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const canonical = [
    'GET',
    path,
    '',
    `host:swift.example.com\nx-amz-date:${now}\n`,
    'host;x-amz-date',
    'UNSIGNED-PAYLOAD',
  ].join('\n');
  return [
    'AWS4-HMAC-SHA256',
    now,
    `${now.slice(0, 8)}/${region}/s3/aws4_request`,
    createHash('sha256').update(canonical).digest('hex'),
  ].join('\n');
}

export function signV4(secret: string, stringToSign: string): string {
  const [, , scope = ''] = stringToSign.split('\n');
  const [date = '', region = '', service = ''] = scope.split('/');
  const h = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
  const key = h(h(h(h(`AWS4${secret}`, date), region), service), 'aws4_request');
  return createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
}

/** s3token's body: the string to sign urlsafe-base64-encoded, as swift's s3token sends it. */
export function s3tokensBody(
  access: string,
  stringToSign: string,
  signature: string,
  spelling: 'credentials' | 'credential' | 'ec2Credentials' = 'credentials',
) {
  const token = Buffer.from(stringToSign, 'utf8').toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
  return { [spelling]: { access, token, signature } };
}

export function signedBody(
  access: string,
  secret: string,
  version: 'v2' | 'v4' = 'v4',
  spelling?: 'credentials' | 'credential' | 'ec2Credentials',
) {
  const sts = version === 'v4' ? v4StringToSign() : v2StringToSign();
  return s3tokensBody(access, sts, version === 'v4' ? signV4(secret, sts) : signV2(secret, sts), spelling);
}

export async function v3Token(gatewayUrl: string, user: string, password: string): Promise<string> {
  const res = await request(gatewayUrl)
    .post('/auth/v3/auth/tokens')
    .send({
      auth: {
        identity: { methods: ['password'], password: { user: { name: user, domain: { id: 'default' }, password } } },
        scope: { project: { name: user, domain: { id: 'default' } } },
      },
    });
  if (res.status !== 201) throw new Error(`login ${user}: ${res.status} ${res.text}`);
  return res.headers['x-subject-token'] as string;
}

export interface Ec2Credential {
  access: string;
  secret: string;
  user_id: string;
  tenant_id: string;
}

export async function createEc2(gatewayUrl: string, token: string, user: string): Promise<Ec2Credential> {
  const res = await request(gatewayUrl)
    .post(`/auth/v3/users/${encodeURIComponent(user)}/credentials/OS-EC2`)
    .set('X-Auth-Token', token)
    .send({ tenant_id: user });
  if (res.status !== 201) throw new Error(`create credential for ${user}: ${res.status} ${res.text}`);
  return (res.body as { credential: Ec2Credential }).credential;
}
