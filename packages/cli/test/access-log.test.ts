import { TRANSFER_DETAIL_FIELD_NAMES } from '@cairn/domain';
import { BatchBuilder, parseAccessLine, type AccessRecord } from '../src/utilization/access-log';
import { sampleFromHeaders } from '../src/utilization/collect';

/**
 * Lines written by Swift 2.30's own proxy_logging middleware (default log_msg_template), captured
 * from /usr/lib/python3/dist-packages/swift; the third as rsyslog writes it to a file.
 */
const PUT_OBJECT =
  '10.0.0.9 10.0.0.9 23/Nov/2026/20/45/36 PUT /v1/AUTH_alice/photos/cat%2520pic.jpg%3Fmultipart-manifest%3Dput HTTP/1.0 201 - python-swiftclient-4.1.0%20x gAAAAAsecret 1234 - - tx0123456789abcdef-0063e1c2f0 - 0.0000 - - 1795466736.667692661 1795466736.667725801 1';
const GET_ACCOUNT =
  '10.0.0.8 10.0.0.8 23/Nov/2026/20/45/36 GET /v1/AUTH_bob HTTP/1.0 200 - - - - 5 - tx2 - 0.0001 - - 1795466736.669792652 1795466736.669847965 -';
const SYSLOG_SLO =
  'Nov 23 20:45:36 proxy1 proxy-server: 10.0.0.8 10.0.0.8 23/Nov/2026/20/45/36 GET /v1/AUTH_bob/c/o HTTP/1.0 200 - - - - 5 - tx3 - 0.0000 SLO - 1795466736.670028687 1795466736.670050859 -';
const INFO =
  '127.0.0.1 127.0.0.1 23/Nov/2026/20/45/37 GET /info HTTP/1.0 200 - curl/8.0 - - 812 - tx4 - 0.0010 - - 1795466737.000000000 1795466737.001000000 -';
const UNICODE_ACCOUNT =
  '10.0.0.8 10.0.0.8 23/Nov/2026/20/45/36 DELETE /v1/AUTH_%25C3%25A9t%25C3%25A9/c HTTP/1.1 204 - - - - - - tx5 - 0.0100 - - 1795466736.5 1795466736.6 -';

/**
 * The same template followed by ` {account}` (docs/utilization.md). An S3 request logs its S3 path;
 * {account} comes from the Swift path s3api made of it, quoted once from Swift's WSGI string (each
 * byte of a UTF-8 name one character: 'é' is logged %C3%83%C2%A9). A Swift API request's {account}
 * is quoted twice, like its path. Values printed by Debian's Swift 2.30.1 LogStringFormatter.
 */
const S3_PUT =
  '10.0.0.9 10.0.0.9 23/Nov/2026/20/45/36 PUT /alice-bucket/dir/upload.bin HTTP/1.0 200 - aws-cli/2.9.19 - 70000 - - tx6 - 0.0300 - - 1795466736.700000000 1795466736.730000000 0 AUTH_alice';
const S3_GET_SPECIAL =
  'Nov 23 20:45:36 proxy1 proxy-server: 10.0.0.9 10.0.0.9 23/Nov/2026/20/45/36 GET /b/k HTTP/1.0 200 - Boto3 - - 512 - tx7 - 0.0100 - - 1795466736.8 1795466736.9 0 AUTH_%C3%83%C2%A9t%C3%83%C2%A9%20b';
const SWIFT_WITH_ACCOUNT =
  '10.0.0.9 10.0.0.9 23/Nov/2026/20/45/36 PUT /v1/AUTH_%25C3%25A9t%25C3%25A9%2520b/c/o HTTP/1.0 201 - - - 10 - - tx8 - 0.0100 - - 1795466736.8 1795466736.9 1 AUTH_%25C3%25A9t%25C3%25A9%2520b';
/** Refused by s3api before any Swift path was made: no account. */
const S3_REFUSED =
  '10.0.0.9 10.0.0.9 23/Nov/2026/20/45/36 PUT /b/k HTTP/1.0 403 - - - 70000 243 - tx9 - 0.0100 - - 1795466736.8 1795466736.9 - -';

const record = (line: string): AccessRecord => {
  const r = parseAccessLine(line);
  if (r.kind !== 'record') throw new Error(`not a record: ${JSON.stringify(r)}`);
  return r.record;
};

describe('Swift proxy access log lines', () => {
  it('when an object PUT is read, then the account, policy, start time and bytes received come out', () => {
    expect(record(PUT_OBJECT)).toEqual({
      account: 'AUTH_alice',
      policyIndex: 1,
      startMs: 1795466736667,
      method: 'PUT',
      status: 201,
      bytesIn: 1234,
      bytesOut: 0,
      cls: 'put',
      api: 'swift',
      clientIp: '10.0.0.9',
      remoteAddr: '10.0.0.9',
      transactionId: 'tx0123456789abcdef-0063e1c2f0',
    });
  });

  it("when an account GET without policy is read, then '-' fields are zero and the policy is null", () => {
    expect(record(GET_ACCOUNT)).toMatchObject({ account: 'AUTH_bob', policyIndex: null, bytesIn: 0, bytesOut: 5 });
  });

  it('when a syslog prefix comes first, then the message is still found; middleware subrequests are skipped', () => {
    expect(parseAccessLine(SYSLOG_SLO)).toEqual({ kind: 'skipped', reason: 'subrequest' });
    expect(parseAccessLine(SYSLOG_SLO.replace(' SLO ', ' - '))).toMatchObject({
      kind: 'record',
      record: { account: 'AUTH_bob', bytesOut: 5 },
    });
  });

  it('when a request is not for an account, then it is skipped, not malformed', () => {
    expect(parseAccessLine(INFO)).toEqual({ kind: 'skipped', reason: 'not-an-account' });
  });

  it('when the account name is percent-encoded, then it is decoded once more', () => {
    expect(record(UNICODE_ACCOUNT)).toMatchObject({ account: 'AUTH_été', method: 'DELETE', status: 204 });
  });

  it('when the account name has a space or other characters a username may have, then it is decoded and counted', () => {
    // Swift quotes path_qs (a space is %20) and its log formatter quotes that again (%2520).
    const spaced = UNICODE_ACCOUNT.replace('AUTH_%25C3%25A9t%25C3%25A9', 'AUTH_a%2520b');
    expect(record(spaced)).toMatchObject({ account: 'AUTH_a b' });
    expect(record(UNICODE_ACCOUNT.replace('AUTH_%25C3%25A9t%25C3%25A9', 'AUTH_a%20b'))).toMatchObject({
      account: 'AUTH_a b',
    });
    expect(
      record(
        UNICODE_ACCOUNT.replace('AUTH_%25C3%25A9t%25C3%25A9', 'AUTH_100%2525%2520%2522sure%2522%252C%2520%25231%253F'),
      ),
    ).toMatchObject({ account: 'AUTH_100% "sure", #1?' });
    const longest = `AUTH_${'x'.repeat(251)}`;
    expect(record(UNICODE_ACCOUNT.replace('AUTH_%25C3%25A9t%25C3%25A9', longest))).toMatchObject({ account: longest });
    // What Swift cannot hold stays malformed: an encoded '/', a control character, a name over 256 characters.
    for (const bad of ['AUTH_a%252Fb', 'AUTH_a%2501b', `${longest}x`]) {
      expect(parseAccessLine(UNICODE_ACCOUNT.replace('AUTH_%25C3%25A9t%25C3%25A9', bad))).toEqual({
        kind: 'malformed',
        code: 'account',
        reason: 'bad account name',
      });
    }
  });

  it('when the template ends in {account}, then an S3 request is billed to the account Swift logged, byte for byte', () => {
    expect(record(S3_PUT)).toMatchObject({
      account: 'AUTH_alice',
      policyIndex: 0,
      startMs: 1795466736700,
      method: 'PUT',
      status: 200,
      bytesIn: 70000,
      bytesOut: 0,
      cls: 'put',
      api: 's3',
    });
    expect(record(S3_GET_SPECIAL)).toMatchObject({ account: 'AUTH_été b', bytesOut: 512 });
    // A Swift API request: path and {account} agree.
    expect(record(SWIFT_WITH_ACCOUNT)).toMatchObject({ account: 'AUTH_été b', policyIndex: 1, bytesIn: 10 });
    expect(parseAccessLine(`${INFO} -`)).toEqual({ kind: 'skipped', reason: 'not-an-account' });
    expect(parseAccessLine(S3_PUT.replace(' - - 1795', ' S3 - 1795'))).toEqual({
      kind: 'skipped',
      reason: 'subrequest',
    });
    expect(parseAccessLine(S3_PUT.replace(/AUTH_alice$/, 'AUTH_a%2Fb'))).toEqual({
      kind: 'malformed',
      code: 'account',
      reason: 'bad account name',
    });
  });

  it('when a request names no account (an S3 request in the default template, or one refused before it reached an account), then it is unattributed', () => {
    expect(parseAccessLine(S3_PUT.replace(/ AUTH_alice$/, ''))).toEqual({ kind: 'unattributed' });
    expect(parseAccessLine(S3_REFUSED)).toEqual({ kind: 'unattributed' });
    expect(parseAccessLine(INFO.replace('/info', '/'))).toEqual({ kind: 'unattributed' });
  });

  it('when a line is cut short or its fields are wrong, then it is malformed with a reason', () => {
    expect(parseAccessLine(PUT_OBJECT.slice(0, 80))).toMatchObject({
      kind: 'malformed',
      code: 'fields',
      reason: expect.stringMatching(/expected 21 fields/),
    });
    expect(parseAccessLine(PUT_OBJECT.replace(' 1234 ', ' lots '))).toMatchObject({
      kind: 'malformed',
      code: 'bytes',
      reason: 'bad byte counts',
    });
    expect(parseAccessLine(PUT_OBJECT.replace(' 201 ', ' 2O1 '))).toMatchObject({
      kind: 'malformed',
      reason: expect.stringMatching(/bad status/),
    });
    expect(parseAccessLine(PUT_OBJECT.replace('1795466736.667692661', 'yesterday'))).toMatchObject({
      kind: 'malformed',
      code: 'start-time',
    });
    expect(parseAccessLine(PUT_OBJECT.replace(' PUT ', ' put '))).toMatchObject({ kind: 'malformed', code: 'method' });
    expect(parseAccessLine(PUT_OBJECT.replace('/v1/AUTH_alice', 'v1/AUTH_alice'))).toMatchObject({
      kind: 'malformed',
      code: 'path',
    });
    expect(parseAccessLine(PUT_OBJECT.replace(/ 1$/, ' x'))).toMatchObject({
      kind: 'malformed',
      reason: expect.stringMatching(/policy/),
    });
    expect(parseAccessLine('')).toMatchObject({ kind: 'malformed' });
  });
});

const zeros = Object.fromEntries(TRANSFER_DETAIL_FIELD_NAMES.map((f) => [f, 0]));

describe('transfer batches', () => {
  const build = (lines: string[]) => {
    const b = new BatchBuilder(1);
    for (const l of lines) {
      const p = parseAccessLine(l);
      b.addLine(l, p.kind === 'record' ? p.record : null);
    }
    return b.build();
  };

  it('when lines are summed, then per account, policy and hour, with the covered span', () => {
    const batch = build([PUT_OBJECT, PUT_OBJECT.replace('tx0123', 'tx9999'), GET_ACCOUNT, INFO])!;
    expect(batch.records).toEqual([
      {
        account: 'AUTH_alice',
        policy_index: 1,
        hour: '2026-11-23T20:00:00.000Z',
        bytes_in: 2468,
        bytes_out: 0,
        req_count: 2,
        ...zeros,
        req_put: 2,
      },
      {
        account: 'AUTH_bob',
        policy_index: null,
        hour: '2026-11-23T20:00:00.000Z',
        bytes_in: 0,
        bytes_out: 5,
        req_count: 1,
        ...zeros,
        req_list: 1,
      },
    ]);
    expect(batch.covered).toEqual({ start: '2026-11-23T20:45:36.667Z', end: '2026-11-23T20:45:36.669Z' });
  });

  it('when the same lines are batched again, then the id is the same; other lines or another cluster give another', () => {
    const id = build([PUT_OBJECT, GET_ACCOUNT])!.batch_id;
    expect(build([PUT_OBJECT, GET_ACCOUNT])!.batch_id).toBe(id);
    expect(build([PUT_OBJECT, GET_ACCOUNT, INFO])!.batch_id).not.toBe(id);
    const other = new BatchBuilder(2);
    other.addLine(PUT_OBJECT, record(PUT_OBJECT));
    other.addLine(GET_ACCOUNT, record(GET_ACCOUNT));
    expect(other.build()!.batch_id).not.toBe(id);
    expect(build([INFO])).toBeNull();
  });
});

describe('account HEAD headers', () => {
  it('when Swift answers a HEAD, then totals and per-policy stats come out (names as Swift sends them)', () => {
    const headers = new Headers({
      'X-Account-Bytes-Used': '3000',
      'X-Account-Object-Count': '3',
      'X-Account-Container-Count': '2',
      'X-Account-Storage-Policy-Gold-Bytes-Used': '1000',
      'X-Account-Storage-Policy-Gold-Object-Count': '1',
      'X-Account-Storage-Policy-Gold-Container-Count': '1',
      'X-Account-Storage-Policy-Silver-Ec-Bytes-Used': '2000',
      'X-Account-Storage-Policy-Silver-Ec-Object-Count': '2',
      'X-Account-Storage-Policy-Silver-Ec-Container-Count': '1',
      'X-Timestamp': '1795466736.66769',
    });
    expect(sampleFromHeaders('AUTH_a', headers)).toEqual({
      account: 'AUTH_a',
      bytes_used: 3000,
      object_count: 3,
      container_count: 2,
      policies: [
        { name: 'gold', bytes_used: 1000, object_count: 1, container_count: 1 },
        { name: 'silver-ec', bytes_used: 2000, object_count: 2, container_count: 1 },
      ],
    });
  });
});
