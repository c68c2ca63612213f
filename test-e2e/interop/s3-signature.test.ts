/**
 * Cairn's S3 signature check against what a real Swift proxy would send it: botocore (the signer
 * inside awscli and boto3) signs S3 requests, V4 and V2, in headers and presigned URLs; Swift's
 * own s3api (the Debian package) builds the string to sign from each request, and the script
 * prints the body Swift's s3token posts to /v3/s3tokens. No proxy is started: this pins the
 * string-to-sign contract between s3api/s3token and packages/domain before the gateway route
 * exists.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { generateS3AccessKey, generateS3Secret, verifyS3Signature } from '@cairn/domain';
import { SWIFT_PYTHON } from './swift-cluster';

const run = promisify(execFile);
const SCRIPT = join(__dirname, 's3-strings-to-sign.py');

interface Case {
  name: string;
  body: { credentials: { access: string; token: string; signature: string } };
  /** s3api's own check of the signature with the right secret. */
  s3apiAccepts: boolean;
}

async function stringsToSign(access: string, secret: string): Promise<Case[]> {
  const { stdout } = await run(SWIFT_PYTHON, [SCRIPT, access, secret], {
    env: {
      PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      LC_ALL: 'C.UTF-8',
      PYTHONNOUSERSITE: '1',
    },
    timeout: 60_000,
  });
  return JSON.parse(stdout) as Case[];
}

describe("Swift s3api's strings to sign, checked by Cairn", () => {
  const access = generateS3AccessKey();
  const secret = generateS3Secret();
  let cases: Case[];

  beforeAll(async () => {
    cases = await stringsToSign(access, secret);
  });

  it('when botocore signs with a generated credential, then every request s3api sees verifies, with the version it was signed with', async () => {
    expect(cases.map((c) => c.name)).toEqual([
      'v4 header GET object',
      'v4 header PUT object with metadata',
      'v4 header list with query',
      'v4 presigned GET',
      'v2 header PUT with x-amz headers',
      'v2 header GET ?acl',
      'v2 presigned GET',
    ]);
    for (const c of cases) {
      expect({ name: c.name, s3apiAccepts: c.s3apiAccepts }).toEqual({ name: c.name, s3apiAccepts: true });
      const verdict = await verifyS3Signature(c.body, (key) => (key === access ? { secret, owner: 'alice' } : null));
      expect({ name: c.name, verdict }).toMatchObject({
        name: c.name,
        verdict: { ok: true, accessKey: access, owner: 'alice', version: c.name.slice(0, 2) },
      });
    }
  });

  it('when the secret on file is another one, then none of them verifies', async () => {
    const other = generateS3Secret();
    for (const c of cases) {
      expect(await verifyS3Signature(c.body, () => ({ secret: other, owner: 'alice' }))).toMatchObject({
        ok: false,
        reason: 'signature-mismatch',
      });
    }
  });

  it('when the access key is unknown, then none of them verifies', async () => {
    for (const c of cases) {
      expect(await verifyS3Signature(c.body, () => null)).toMatchObject({ ok: false, reason: 'unknown-access-key' });
    }
  });
});
