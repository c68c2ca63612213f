import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { verifyS3Signature, type S3SecretLookup } from '../src';

// ---------------------------------------------------------------------------------------------
// Reference signers written apart from src/s3-signature.ts, straight from AWS's descriptions.
// ---------------------------------------------------------------------------------------------
const hmac = (algorithm: 'sha1' | 'sha256', key: Buffer | string, data: Buffer | string) =>
  createHmac(algorithm, key).update(data).digest();

function referenceV2(stringToSign: Buffer, secret: string): string {
  return hmac('sha1', Buffer.from(secret, 'utf8'), stringToSign).toString('base64');
}

function referenceV4(stringToSign: Buffer, secret: string, date: string, region: string, service: string): string {
  let key = hmac('sha256', Buffer.from(`AWS4${secret}`, 'utf8'), date);
  key = hmac('sha256', key, region);
  key = hmac('sha256', key, service);
  key = hmac('sha256', key, 'aws4_request');
  return hmac('sha256', key, stringToSign).toString('hex');
}

const token = (sts: Buffer) => sts.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
const bodyOf = (sts: Buffer, signature: string) => ({
  credentials: { access: 'AKIAPROPERTYTEST0000', token: token(sts), signature },
});
const lookupFor =
  (secret: string): S3SecretLookup<string> =>
  () => ({ secret, owner: 'owner' });

/**
 * Secrets: any text that survives UTF-8. Without NUL, because HMAC pads a short key with zero
 * bytes: "k" and "k\0" are the same HMAC key (true of AWS as of any HMAC verifier).
 */
const secretArb = fc
  .string({ unit: 'binary', minLength: 1, maxLength: 80 })
  .filter((s) => !s.includes('\u0000') && Buffer.from(s, 'utf8').toString('utf8') === s);

const v2StringArb = fc
  .uint8Array({ minLength: 1, maxLength: 600 })
  .map((bytes) => Buffer.from(bytes))
  .filter((b) => b.subarray(0, 4).toString('latin1') !== 'AWS4');

const pad = (n: number, width: number) => String(n).padStart(width, '0');
const v4Arb = fc
  .record({
    when: fc.date({
      min: new Date('2000-01-01T00:00:00Z'),
      max: new Date('2099-12-31T23:59:59Z'),
      noInvalidDate: true,
    }),
    region: fc.stringMatching(/^[a-z0-9-]{1,24}$/),
    hash: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex')),
  })
  .map(({ when, region, hash }) => {
    const date = `${when.getUTCFullYear()}${pad(when.getUTCMonth() + 1, 2)}${pad(when.getUTCDate(), 2)}`;
    const stamp = `${date}T${pad(when.getUTCHours(), 2)}${pad(when.getUTCMinutes(), 2)}${pad(when.getUTCSeconds(), 2)}Z`;
    return { date, region, sts: Buffer.from(`AWS4-HMAC-SHA256\n${stamp}\n${date}/${region}/s3/aws4_request\n${hash}`) };
  });

/** The string with one byte changed (a different value, at any position). */
const withOneByteChanged = (b: Buffer, at: number, delta: number) => {
  const copy = Buffer.from(b);
  const i = at % copy.length;
  copy[i] = (copy[i]! + delta) % 256;
  return copy;
};

const NUM_RUNS = 200;

describe('S3 signatures, for any secret and string to sign', () => {
  it('when a V2 signature is made with the right secret, then it verifies; with any other secret, string or signature, it does not', async () => {
    await fc.assert(
      fc.asyncProperty(
        secretArb,
        secretArb,
        v2StringArb,
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.string({ minLength: 1, maxLength: 256 }),
        async (secret, other, sts, at, delta, forged) => {
          const right = referenceV2(sts, secret);
          expect(await verifyS3Signature(bodyOf(sts, right), lookupFor(secret))).toMatchObject({
            ok: true,
            version: 'v2',
          });
          if (other !== secret) {
            expect(await verifyS3Signature(bodyOf(sts, right), lookupFor(other))).toMatchObject({
              ok: false,
              reason: 'signature-mismatch',
            });
          }
          expect(
            await verifyS3Signature(bodyOf(withOneByteChanged(sts, at, delta), right), lookupFor(secret)),
          ).toMatchObject({ ok: false });
          if (forged !== right) {
            expect(await verifyS3Signature(bodyOf(sts, forged), lookupFor(secret))).toMatchObject({
              ok: false,
              reason: 'signature-mismatch',
            });
          }
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });

  it('when a V4 signature is made with the right secret, then it verifies; with any other secret, string or signature, it does not', async () => {
    await fc.assert(
      fc.asyncProperty(
        secretArb,
        secretArb,
        v4Arb,
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.string({ minLength: 1, maxLength: 256 }),
        async (secret, other, { date, region, sts }, at, delta, forged) => {
          const right = referenceV4(sts, secret, date, region, 's3');
          expect(await verifyS3Signature(bodyOf(sts, right), lookupFor(secret))).toMatchObject({
            ok: true,
            version: 'v4',
            scope: { date, region, service: 's3' },
          });
          if (other !== secret) {
            expect(await verifyS3Signature(bodyOf(sts, right), lookupFor(other))).toMatchObject({
              ok: false,
              reason: 'signature-mismatch',
            });
          }
          // A changed byte either breaks the V4 shape (malformed) or changes what was signed.
          expect(
            await verifyS3Signature(bodyOf(withOneByteChanged(sts, at, delta), right), lookupFor(secret)),
          ).toMatchObject({ ok: false });
          if (forged !== right) {
            expect(await verifyS3Signature(bodyOf(sts, forged), lookupFor(secret))).toMatchObject({
              ok: false,
              reason: 'signature-mismatch',
            });
          }
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });

  it('when the key is unknown, then no signature verifies, whatever it is', async () => {
    await fc.assert(
      fc.asyncProperty(v2StringArb, fc.string({ minLength: 1, maxLength: 256 }), async (sts, signature) => {
        expect(await verifyS3Signature(bodyOf(sts, signature), () => null)).toMatchObject({
          ok: false,
          reason: 'unknown-access-key',
        });
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
