import { createHmac } from 'node:crypto';
import { parseS3TokensBody, signatureV2, signatureV4, verifyS3Signature, type S3SecretLookup } from '../src';

/**
 * Expected signatures are typed in from AWS's published documents, never computed here:
 * - the Signature Version 4 test suite (docs.aws.amazon.com/general/latest/gr/signature-v4-test-suite.html):
 *   its `.sts` (string to sign) and `.authz` (signature) files, credentials AKIDEXAMPLE /
 *   wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, scope 20150830/us-east-1/service;
 * - the S3 API reference's SigV4 examples (sig-v4-header-based-auth.html "GET Object",
 *   sigv4-query-string-auth.html), secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY;
 * - the S3 V2 examples (RESTAuthentication.html "Authentication examples"), access key
 *   AKIAIOSFODNN7EXAMPLE, secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY.
 */
const SUITE_SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
const S3_DOC_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const SUITE = { allowedServices: ['service'] };

const sigV4Suite = [
  {
    name: 'get-vanilla',
    sts: 'AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\nbb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63',
    signature: '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  },
  {
    name: 'get-vanilla-query-order-key-case',
    sts: 'AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n816cd5b414d056048ba4f7c5386d6e0533120fb1fcfa93762cf0fc39e2cf19e0',
    signature: 'b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500',
  },
  {
    name: 'post-vanilla',
    sts: 'AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n553f88c9e4d10fc9e109e2aeb65f030801b70c2f6468faca261d401ae622fc87',
    signature: '5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b',
  },
  {
    name: 'post-x-www-form-urlencoded',
    sts: 'AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n42a5e5bb34198acb3e84da4f085bb7927f2bc277ca766e6d19c73c2154021281',
    signature: 'ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a',
  },
];

const sigV4S3Docs = [
  {
    name: 'GET Object with a Range header (Authorization header)',
    sts: 'AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972',
    signature: 'f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
  },
  {
    name: 'presigned GET Object (query string)',
    sts: 'AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n3bfa292879f6447bbcda7001decf97f4a54dc650c8942174ae0a9121cf58ad04',
    signature: 'aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404',
  },
];

const sigV2S3Docs = [
  {
    name: 'Object GET',
    sts: 'GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/awsexamplebucket1/photos/puppy.jpg',
    signature: 'qgk2+6Sv9/oM7G3qLEjTH1a1l1g=',
  },
  {
    name: 'Object PUT',
    sts: 'PUT\n\nimage/jpeg\nTue, 27 Mar 2007 21:15:45 +0000\n/awsexamplebucket1/photos/puppy.jpg',
    signature: 'iqRzw+ileNPu1fhspnRs8nOjjIA=',
  },
  {
    name: 'List',
    sts: 'GET\n\n\nTue, 27 Mar 2007 19:42:41 +0000\n/awsexamplebucket1/',
    signature: 'm0WP8eCtspQl5Ahe6L1SozdX9YA=',
  },
  {
    name: 'Fetch (?acl)',
    sts: 'GET\n\n\nTue, 27 Mar 2007 19:44:46 +0000\n/awsexamplebucket1/?acl',
    signature: '82ZHiFIjc+WbcwFKGUVEQspPn+0=',
  },
  {
    name: 'Delete (x-amz-date)',
    sts: 'DELETE\n\n\nTue, 27 Mar 2007 21:20:26 +0000\n/awsexamplebucket1/photos/puppy.jpg',
    signature: 'XbyTlbQdu9Xw5o8P4iMwPktxQd8=',
  },
  {
    name: 'Upload (x-amz- headers)',
    sts:
      'PUT\n4gJE4saaMU4BqNR0kLY+lw==\napplication/x-download\nTue, 27 Mar 2007 21:06:08 +0000\n' +
      'x-amz-acl:public-read\nx-amz-meta-checksumalgorithm:crc32\nx-amz-meta-filechecksum:0x02661779\n' +
      'x-amz-meta-reviewedby:joe@awsexamplebucket1.net,jane@awsexamplebucket1.net\n/static.awsexamplebucket1.net/db-backup.dat.gz',
    signature: 'dKZcB+bz2EPXgSdXZp9ozGeOM4I=',
  },
  {
    name: 'List all my buckets',
    sts: 'GET\n\n\nWed, 28 Mar 2007 01:29:59 +0000\n/',
    signature: 'qGdzdERIC03wnaRNKh6OqZehG9s=',
  },
  {
    name: 'Unicode keys',
    sts: 'GET\n\n\nWed, 28 Mar 2007 01:49:49 +0000\n/dictionary/fran%C3%A7ais/pr%c3%a9f%c3%a8re',
    signature: 'DNEZGsoieTZ92F3bUfSPQcbGmlM=',
  },
  // Query string authentication, percent-encoded in the published URL (NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D).
  // The guide signed it for the bucket "johnsmith"; when its examples were moved to
  // "awsexamplebucket1" this row kept the old signature, so the older string to sign is the one it fits.
  {
    name: 'query string (presigned)',
    sts: 'GET\n\n\n1175139620\n/johnsmith/photos/puppy.jpg',
    signature: 'NpgCjnDzrM+WFzoENXmpNDUsSn8=',
  },
];

/** As Swift's s3token sends it: base64.urlsafe_b64encode(string_to_sign), padded. */
const s3tokenToken = (sts: string) =>
  Buffer.from(sts, 'utf8').toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
const body = (access: string, sts: string, signature: string) => ({
  credentials: { access, token: s3tokenToken(sts), signature },
});

interface Owner {
  userId: string;
}
const lookupOf =
  (keys: Record<string, string>): S3SecretLookup<Owner> =>
  (access) =>
    access in keys ? { secret: keys[access]!, owner: { userId: `user-of-${access}` } } : null;

describe('AWS signature V4 against the published test suite', () => {
  it.each(sigV4Suite)(
    'when the $name string to sign is signed with the suite secret, then the signature is the published one',
    ({ sts, signature }) => {
      expect(
        signatureV4(Buffer.from(sts), SUITE_SECRET, { date: '20150830', region: 'us-east-1', service: 'service' }),
      ).toBe(signature);
    },
  );

  it.each(sigV4Suite)(
    'when s3token posts the $name case, then it verifies as V4 with its scope',
    async ({ sts, signature }) => {
      const verdict = await verifyS3Signature(
        body('AKIDEXAMPLE', sts, signature),
        lookupOf({ AKIDEXAMPLE: SUITE_SECRET }),
        SUITE,
      );
      expect(verdict).toEqual({
        ok: true,
        accessKey: 'AKIDEXAMPLE',
        owner: { userId: 'user-of-AKIDEXAMPLE' },
        version: 'v4',
        scope: { date: '20150830', region: 'us-east-1', service: 'service' },
      });
    },
  );

  it.each(sigV4S3Docs)(
    'when the S3 reference example "$name" is posted, then it verifies with the default S3-only services',
    async ({ sts, signature }) => {
      const verdict = await verifyS3Signature(
        body('AKIAIOSFODNN7EXAMPLE', sts, signature),
        lookupOf({ AKIAIOSFODNN7EXAMPLE: S3_DOC_SECRET }),
      );
      expect(verdict).toMatchObject({
        ok: true,
        version: 'v4',
        scope: { date: '20130524', region: 'us-east-1', service: 's3' },
      });
    },
  );

  it('when the region is not ASCII, then the signing key is derived from its UTF-8 bytes, as botocore signs and Keystone checks', async () => {
    // Keystone splits the decoded bytes and feeds each scope part to HMAC as it is; so does this reference.
    const scope = '20261126/ré-1/s3/aws4_request';
    const sts = `AWS4-HMAC-SHA256\n20261126T120000Z\n${scope}\n${'ab'.repeat(32)}`;
    const hmac = (key: Buffer, data: Buffer) => createHmac('sha256', key).update(data).digest();
    const [date, region, service, terminator] = Buffer.from(scope, 'utf8')
      .toString('latin1')
      .split('/')
      .map((part) => Buffer.from(part, 'latin1'));
    const key = hmac(
      hmac(hmac(hmac(Buffer.from(`AWS4${S3_DOC_SECRET}`, 'utf8'), date!), region!), service!),
      terminator!,
    );
    const signature = createHmac('sha256', key).update(Buffer.from(sts, 'utf8')).digest('hex');
    const verdict = await verifyS3Signature(
      body('AKIAIOSFODNN7EXAMPLE', sts, signature),
      lookupOf({ AKIAIOSFODNN7EXAMPLE: S3_DOC_SECRET }),
    );
    expect(verdict).toMatchObject({
      ok: true,
      version: 'v4',
      scope: { date: '20261126', region: 'ré-1', service: 's3' },
    });
  });

  it('when a V4 string to sign is not UTF-8 text, then it is refused as malformed', () => {
    const raw = Buffer.concat([
      Buffer.from('AWS4-HMAC-SHA256\n20261126T120000Z\n20261126/r'),
      Buffer.from([0xe9]),
      Buffer.from(`/s3/aws4_request\n${'ab'.repeat(32)}`),
    ]);
    const parsed = parseS3TokensBody({
      credentials: { access: 'AKIAIOSFODNN7EXAMPLE', token: raw.toString('base64'), signature: 'x' },
    });
    expect(parsed).toMatchObject({ ok: false });
  });

  it('when the signature is upper-case hex, then it does not match (AWS and Keystone compare exactly)', async () => {
    const { sts, signature } = sigV4Suite[0]!;
    const verdict = await verifyS3Signature(
      body('AKIDEXAMPLE', sts, signature.toUpperCase()),
      lookupOf({ AKIDEXAMPLE: SUITE_SECRET }),
      SUITE,
    );
    expect(verdict).toMatchObject({ ok: false, reason: 'signature-mismatch' });
  });
});

describe('AWS signature V2 against the S3 developer guide', () => {
  it.each(sigV2S3Docs)(
    'when the "$name" string to sign is signed, then the signature is the published one',
    ({ sts, signature }) => {
      expect(signatureV2(Buffer.from(sts), S3_DOC_SECRET)).toBe(signature);
    },
  );

  it.each(sigV2S3Docs)('when s3token posts the "$name" example, then it verifies as V2', async ({ sts, signature }) => {
    const verdict = await verifyS3Signature(
      body('AKIAIOSFODNN7EXAMPLE', sts, signature),
      lookupOf({ AKIAIOSFODNN7EXAMPLE: S3_DOC_SECRET }),
    );
    expect(verdict).toEqual({
      ok: true,
      accessKey: 'AKIAIOSFODNN7EXAMPLE',
      owner: { userId: 'user-of-AKIAIOSFODNN7EXAMPLE' },
      version: 'v2',
    });
  });

  it('when the secret differs from the published one by one character (+ for /), then the published signature does not match', async () => {
    const { sts, signature } = sigV2S3Docs[0]!;
    const verdict = await verifyS3Signature(
      body('AKIAIOSFODNN7EXAMPLE', sts, signature),
      lookupOf({ AKIAIOSFODNN7EXAMPLE: SUITE_SECRET }),
    );
    expect(verdict).toMatchObject({
      ok: false,
      reason: 'signature-mismatch',
      owner: { userId: 'user-of-AKIAIOSFODNN7EXAMPLE' },
    });
  });
});

describe('the s3tokens body as Keystone reads it', () => {
  const { sts, signature } = sigV2S3Docs[0]!;
  const creds = { access: 'AKIAIOSFODNN7EXAMPLE', token: s3tokenToken(sts), signature };
  const lookup = lookupOf({ AKIAIOSFODNN7EXAMPLE: S3_DOC_SECRET });

  it.each([['credentials'], ['credential'], ['ec2Credentials']])(
    'when the credentials come under "%s", then they are read',
    async (key) => {
      expect(await verifyS3Signature({ [key]: creds }, lookup)).toMatchObject({ ok: true });
    },
  );

  it('when "credentials" is empty, then "credential" is read, as Python\'s `or` falls through', async () => {
    expect(await verifyS3Signature({ credentials: {}, credential: creds }, lookup)).toMatchObject({ ok: true });
    expect(await verifyS3Signature({ credentials: null, ec2Credentials: creds }, lookup)).toMatchObject({ ok: true });
  });

  it('when the token is standard base64, padded or not, or URL-safe without padding, then it decodes to the same string', async () => {
    const standard = Buffer.from(sts).toString('base64');
    for (const token of [standard, standard.replace(/=+$/, ''), s3tokenToken(sts).replace(/=+$/, '')]) {
      expect(await verifyS3Signature({ credentials: { ...creds, token } }, lookup)).toMatchObject({ ok: true });
    }
  });

  it('when other fields come along (EC2-style host, params, headers), then they are ignored', async () => {
    expect(
      await verifyS3Signature({ credentials: { ...creds, host: 'x', params: {}, headers: {} } }, lookup),
    ).toMatchObject({ ok: true });
  });

  const v4 = sigV4S3Docs[0]!;
  const v4Token = (text: string) => s3tokenToken(text);
  const malformedBodies: [string, unknown][] = [
    ['the body is not an object', 'credentials'],
    ['the body is an array', [creds]],
    ['the body is null', null],
    ['no credentials key is there', { auth: creds }],
    ['all three keys are empty', { credentials: {}, credential: [], ec2Credentials: '' }],
    ['credentials is a string', { credentials: 'AKIAIOSFODNN7EXAMPLE' }],
    ['credentials is a list', { credentials: [creds] }],
    ['access is missing', { credentials: { token: creds.token, signature } }],
    ['access is empty', { credentials: { ...creds, access: '' } }],
    ['access is a number', { credentials: { ...creds, access: 42 } }],
    ['access is too long', { credentials: { ...creds, access: 'A'.repeat(129) } }],
    ['access has a NUL', { credentials: { ...creds, access: 'AKIA\u0000' } }],
    ['access has a newline', { credentials: { ...creds, access: 'AKIA\nX' } }],
    ['token is missing', { credentials: { access: creds.access, signature } }],
    ['token is empty', { credentials: { ...creds, token: '' } }],
    ['token is not base64', { credentials: { ...creds, token: 'not base64!' } }],
    ['token has a length no base64 can have', { credentials: { ...creds, token: 'R0VUCgAAA' } }],
    ['token has padding in the wrong place', { credentials: { ...creds, token: 'R0VUC=g=' } }],
    ['token is too long', { credentials: { ...creds, token: 'A'.repeat(44_000) } }],
    ['signature is missing', { credentials: { access: creds.access, token: creds.token } }],
    ['signature is empty', { credentials: { ...creds, signature: '' } }],
    ['signature is too long', { credentials: { ...creds, signature: 'a'.repeat(257) } }],
    ['signature is a number', { credentials: { ...creds, signature: 1 } }],
    [
      'a V4 string to sign has three lines',
      { credentials: { ...creds, token: v4Token(v4.sts.split('\n').slice(0, 3).join('\n')) } },
    ],
    ['a V4 string to sign has five lines', { credentials: { ...creds, token: v4Token(`${v4.sts}\n`) } }],
    [
      'a V4 string to sign names another algorithm',
      { credentials: { ...creds, token: v4Token(v4.sts.replace('AWS4-HMAC-SHA256', 'AWS4-ECDSA-P256-SHA256')) } },
    ],
    [
      'a V4 timestamp is not compact ISO 8601',
      { credentials: { ...creds, token: v4Token(v4.sts.replace('20130524T000000Z', '2013-05-24T00:00:00Z')) } },
    ],
    [
      'a V4 scope date differs from the timestamp',
      { credentials: { ...creds, token: v4Token(v4.sts.replace('20130524/', '20130525/')) } },
    ],
    [
      'a V4 scope has no terminator',
      { credentials: { ...creds, token: v4Token(v4.sts.replace('/aws4_request', '/aws5_request')) } },
    ],
    [
      'a V4 scope has an empty region',
      { credentials: { ...creds, token: v4Token(v4.sts.replace('/us-east-1/', '//')) } },
    ],
    [
      'a V4 scope names a service other than s3',
      { credentials: { ...creds, token: v4Token(v4.sts.replace('/s3/', '/iam/')) } },
    ],
    [
      'a V4 request hash is not 64 lower-case hex digits',
      { credentials: { ...creds, token: v4Token(v4.sts.replace(/[0-9a-f]{64}$/, 'ABCDEF'.repeat(10) + 'ABCD')) } },
    ],
  ];

  it.each(malformedBodies)(
    'when %s, then the request is malformed, with a sentence saying why, and no key is looked up',
    async (_, bad) => {
      const lookupSpy = jest.fn(lookup);
      const verdict = await verifyS3Signature(bad, lookupSpy);
      expect(verdict).toMatchObject({ ok: false, reason: 'malformed' });
      expect((verdict as { message: string }).message).toMatch(/^\S.*\.$/);
      expect(lookupSpy).not.toHaveBeenCalled();
    },
  );

  it('when the caller allows another service, then a V4 scope naming it is accepted by the parser', () => {
    const iam = v4.sts.replace('/s3/', '/iam/');
    expect(
      parseS3TokensBody({ credentials: { ...creds, token: v4Token(iam) } }, { allowedServices: ['s3', 'iam', 'sts'] }),
    ).toMatchObject({
      ok: true,
      request: { version: 'v4', scope: { service: 'iam' } },
    });
  });
});

describe('unknown access keys and wrong signatures', () => {
  const { sts, signature } = sigV2S3Docs[0]!;

  it('when the access key is unknown, then the verdict says so, the lookup ran once, and a signature that would match any secret was not consulted', async () => {
    const lookup = jest.fn(lookupOf({}));
    const verdict = await verifyS3Signature(body('AKIAIOSFODNN7EXAMPLE', sts, signature), lookup);
    expect(verdict).toEqual({
      ok: false,
      reason: 'unknown-access-key',
      accessKey: 'AKIAIOSFODNN7EXAMPLE',
      message: expect.stringMatching(/\.$/),
    });
    expect(lookup).toHaveBeenCalledTimes(1);
    expect(lookup).toHaveBeenCalledWith('AKIAIOSFODNN7EXAMPLE');
  });

  it('when the signature is wrong, then the verdict names the owner but never the secret', async () => {
    const verdict = await verifyS3Signature(
      body('AKIAIOSFODNN7EXAMPLE', sts, 'iqRzw+ileNPu1fhspnRs8nOjjIA='),
      lookupOf({ AKIAIOSFODNN7EXAMPLE: S3_DOC_SECRET }),
    );
    expect(verdict).toMatchObject({
      ok: false,
      reason: 'signature-mismatch',
      accessKey: 'AKIAIOSFODNN7EXAMPLE',
      owner: { userId: 'user-of-AKIAIOSFODNN7EXAMPLE' },
    });
    expect(JSON.stringify(verdict)).not.toContain(S3_DOC_SECRET);
  });

  it('when the lookup is asynchronous, then it is awaited', async () => {
    const lookup: S3SecretLookup<Owner> = async (access) => ({ secret: S3_DOC_SECRET, owner: { userId: access } });
    expect(await verifyS3Signature(body('K', sts, signature), lookup)).toMatchObject({
      ok: true,
      owner: { userId: 'K' },
    });
  });

  it('when the lookup fails, then the error reaches the caller rather than turning into a verdict', async () => {
    const lookup: S3SecretLookup<Owner> = async () => {
      throw new Error('database unavailable');
    };
    await expect(verifyS3Signature(body('K', sts, signature), lookup)).rejects.toThrow('database unavailable');
  });
});

/**
 * Equal work whether the key exists or not: the same HMACs are computed and one comparison of two
 * 32-byte digests decides, for unknown keys, wrong signatures and right ones alike. The spies only
 * watch; the real functions run.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const crypto = require('node:crypto') as typeof import('node:crypto');
describe('constant-time S3 signature checks', () => {
  let hmacSpy: jest.SpyInstance;
  let equalSpy: jest.SpyInstance<boolean, [NodeJS.ArrayBufferView, NodeJS.ArrayBufferView]>;
  beforeEach(() => {
    hmacSpy = jest.spyOn(crypto, 'createHmac');
    equalSpy = jest.spyOn(crypto, 'timingSafeEqual');
  });
  afterEach(() => {
    hmacSpy.mockRestore();
    equalSpy.mockRestore();
  });

  const work = () => ({
    hmacs: hmacSpy.mock.calls.map(([algorithm, key]) => [algorithm, (key as Buffer).length]),
    comparisons: equalSpy.mock.calls.map(([a, b]) => [a.byteLength, b.byteLength]),
  });

  it.each([
    ['V2', sigV2S3Docs[0]!.sts, sigV2S3Docs[0]!.signature],
    ['V4', sigV4S3Docs[0]!.sts, sigV4S3Docs[0]!.signature],
  ])(
    'when a %s request comes for an unknown key, a wrong signature or the right one, then the same HMACs and one 32-byte comparison run',
    async (_, sts, signature) => {
      // A generated secret is 40 characters, as long as the examples' and the stand-in's.
      const lookup = lookupOf({ AKIAIOSFODNN7EXAMPLE: S3_DOC_SECRET });
      const cases = [
        body('AKIAUNKNOWNEXAMPLE00', sts, signature),
        body(
          'AKIAIOSFODNN7EXAMPLE',
          sts,
          signature.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')),
        ),
        body('AKIAIOSFODNN7EXAMPLE', sts, 'x'),
        body('AKIAIOSFODNN7EXAMPLE', sts, signature),
      ];
      const observed = [];
      for (const c of cases) {
        hmacSpy.mockClear();
        equalSpy.mockClear();
        const verdict = await verifyS3Signature(c, lookup);
        observed.push({ reason: verdict.ok ? 'ok' : verdict.reason, ...work() });
      }
      expect(observed.map((o) => o.reason)).toEqual([
        'unknown-access-key',
        'signature-mismatch',
        'signature-mismatch',
        'ok',
      ]);
      const [first, ...rest] = observed;
      for (const o of rest) {
        expect(o.hmacs).toEqual(first!.hmacs);
        expect(o.comparisons).toEqual([[32, 32]]);
      }
      expect(first!.comparisons).toEqual([[32, 32]]);
      expect(first!.hmacs.length).toBe(sts.startsWith('AWS4') ? 5 : 1);
    },
  );
});
