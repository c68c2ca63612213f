import { TRANSFER_DETAIL_FIELD_NAMES } from '@cairn/domain';
import { BatchBuilder, CopyTracker, parseAccessLine, type AccessRecord } from '../src/utilization/access-log';
import { parseNetworks } from '../src/utilization/networks';

/**
 * Request classes, APIs and networks, from lines in the documented template (the default one and
 * ` {account}`), as Swift's proxy_logging writes them: fields URL-quoted, the path quoted twice,
 * '-' for an empty field, the client's own line with no source, middleware subrequests with one.
 */
interface LineParts {
  client?: string;
  remote?: string;
  method: string;
  path: string;
  status?: number;
  recvd?: string;
  sent?: string;
  txn?: string;
  source?: string;
  policy?: string;
  account?: string;
  agent?: string;
}
const line = (p: LineParts): string =>
  [
    p.client ?? '203.0.113.7',
    p.remote ?? p.client ?? '203.0.113.7',
    '23/Nov/2026/20/45/36',
    p.method,
    p.path,
    'HTTP/1.1',
    p.status ?? 200,
    '-',
    p.agent ?? 'python-swiftclient-4.4.0',
    p.path.startsWith('/v1/') ? 'gAAAAAtok...' : '-',
    p.recvd ?? '-',
    p.sent ?? '-',
    '-',
    p.txn ?? 'tx1f2e3d4c5b6a79880-0063e1c2f0',
    '-',
    '0.0123',
    p.source ?? '-',
    '-',
    '1795466736.500000000',
    '1795466736.512300000',
    p.policy ?? '0',
    p.account ?? (p.path.startsWith('/v1/') ? p.path.split('/')[2]!.split('%3F')[0] : '-'),
  ].join(' ');

const parsed = (p: LineParts) => parseAccessLine(line(p));
const rec = (p: LineParts): AccessRecord => {
  const r = parsed(p);
  if (r.kind !== 'record') throw new Error(`not a record: ${JSON.stringify(r)}`);
  return r.record;
};

describe('request classes of Swift API requests', () => {
  it('when an object, a container or an account is read, then an object GET is get and the others list', () => {
    expect(rec({ method: 'GET', path: '/v1/AUTH_alice/photos/cat.jpg', sent: '5000' })).toMatchObject({
      cls: 'get',
      api: 'swift',
      bytesOut: 5000,
    });
    expect(rec({ method: 'GET', path: '/v1/AUTH_alice/photos%3Fformat%3Djson', policy: '-' }).cls).toBe('list');
    expect(rec({ method: 'GET', path: '/v1/AUTH_alice/photos/', policy: '-' }).cls).toBe('list');
    expect(rec({ method: 'GET', path: '/v1/AUTH_alice', policy: '-' }).cls).toBe('list');
    expect(rec({ method: 'GET', path: '/v1/AUTH_alice/', policy: '-' }).cls).toBe('list');
    // A pseudo-directory's object ("a/") is an object read, not a listing.
    expect(rec({ method: 'GET', path: '/v1/AUTH_alice/photos/dir/' }).cls).toBe('get');
  });

  it('when HEAD, PUT, POST, DELETE and OPTIONS are read, then each is its own class; OPTIONS is other', () => {
    expect(rec({ method: 'HEAD', path: '/v1/AUTH_alice/photos/cat.jpg', status: 200 }).cls).toBe('head');
    expect(rec({ method: 'HEAD', path: '/v1/AUTH_alice', status: 204, policy: '-' }).cls).toBe('head');
    expect(rec({ method: 'PUT', path: '/v1/AUTH_alice/photos', status: 201, policy: '-' }).cls).toBe('put');
    expect(rec({ method: 'POST', path: '/v1/AUTH_alice/photos/cat.jpg', status: 202 }).cls).toBe('post');
    expect(rec({ method: 'DELETE', path: '/v1/AUTH_alice/photos/cat.jpg', status: 204 }).cls).toBe('delete');
    expect(rec({ method: 'OPTIONS', path: '/v1/AUTH_alice/photos/cat.jpg', status: 200 }).cls).toBe('other');
    expect(rec({ method: 'PATCH', path: '/v1/AUTH_alice/photos/cat.jpg', status: 405 }).cls).toBe('other');
  });

  it('when a client COPYs or PUTs with X-Copy-From, then its own line (source SSC) is one copy and the read of the source is not billed', () => {
    // The copy middleware reads the source (a subrequest of its own, source SSC) and turns the
    // client's request into the PUT that writes the copy, in the client's environment: the client's
    // line has source SSC too, with the method the client sent, and 0 bytes received from it.
    const txn = 'txcopy000000000000001-0063e1c2f0';
    const read = parsed({ method: 'GET', path: '/v1/AUTH_alice/c/src', sent: '9000', source: 'SSC', txn });
    expect(read).toEqual({ kind: 'skipped', reason: 'subrequest', copySource: txn });
    expect(rec({ method: 'COPY', path: '/v1/AUTH_alice/c/src', status: 201, source: 'SSC', txn })).toMatchObject({
      cls: 'copy',
      bytesIn: 0,
    });
    expect(rec({ method: 'PUT', path: '/v1/AUTH_alice/c/dst', status: 201, source: 'SSC', txn })).toMatchObject({
      cls: 'copy',
      bytesIn: 0,
      api: 'swift',
    });
  });

  it('when a copy is refused before it writes (the source is missing), then its PUT line is still a copy, by its transaction', () => {
    const txn = 'txcopy000000000000002-0063e1c2f0';
    const tracker = new CopyTracker();
    const read = parsed({ method: 'GET', path: '/v1/AUTH_alice/c/gone', status: 404, sent: '70', source: 'SSC', txn });
    expect(read.kind).toBe('skipped');
    if (read.kind === 'skipped' && read.copySource) tracker.sawSource(read.copySource);
    const put = rec({ method: 'PUT', path: '/v1/AUTH_alice/c/dst', status: 404, sent: '70', txn });
    expect(put.cls).toBe('put');
    expect(tracker.classify(put)).toMatchObject({ cls: 'copy', status: 404 });
    // Another transaction's PUT stays a PUT.
    expect(tracker.classify({ ...put, transactionId: 'txother' }).cls).toBe('put');
  });

  it('when middleware makes subrequests (SLO, DLO, bulk, versioned writes, symlinks, s3api), then they are skipped', () => {
    for (const source of ['SLO', 'DLO', 'BD', 'EA', 'VW', 'OV', 'SYM', 'S3', 'FP', 'SW'])
      expect(parsed({ method: 'GET', path: '/v1/AUTH_alice/c/seg/1', sent: '1048576', source })).toEqual({
        kind: 'skipped',
        reason: 'subrequest',
      });
    // A PUT by another middleware is its subrequest, not a client's copy.
    expect(parsed({ method: 'PUT', path: '/v1/AUTH_alice/c_versions/o', recvd: '5', source: 'VW' }).kind).toBe(
      'skipped',
    );
  });

  it('when a request failed (4xx, 5xx, or 499 for a client that went away), then it keeps its class and its bytes', () => {
    expect(rec({ method: 'PUT', path: '/v1/AUTH_alice/c/big', status: 413, recvd: '65536', sent: '48' })).toMatchObject(
      { cls: 'put', status: 413, bytesIn: 65536, bytesOut: 48 },
    );
    expect(rec({ method: 'GET', path: '/v1/AUTH_alice/c/big', status: 499, sent: '1310720' })).toMatchObject({
      cls: 'get',
      status: 499,
      bytesOut: 1310720,
    });
  });

  it('when a method is not HTTP, then the line is refused as an unknown method, not billed to the account it names', () => {
    expect(parsed({ method: 'FROB', path: '/v1/AUTH_alice/c/o', status: 405 })).toEqual({
      kind: 'unknown-method',
      method: 'FROB',
    });
  });
});

describe('request classes of S3 API requests (s3api)', () => {
  it('when the path is not /v1/ and {account} names the owner, then the request is S3, classed by its path', () => {
    expect(
      rec({ method: 'GET', path: '/', account: 'AUTH_alice', policy: '-', agent: 'aws-cli/2.9.19' }),
    ).toMatchObject({ api: 's3', cls: 'list' });
    expect(rec({ method: 'GET', path: '/bucket', account: 'AUTH_alice', policy: '-' }).cls).toBe('list');
    expect(rec({ method: 'GET', path: '/bucket/%3Flist-type%3D2', account: 'AUTH_alice' }).cls).toBe('list');
    expect(rec({ method: 'GET', path: '/bucket/a/b.bin', account: 'AUTH_alice', sent: '10' })).toMatchObject({
      api: 's3',
      cls: 'get',
    });
    expect(rec({ method: 'HEAD', path: '/bucket/a/b.bin', account: 'AUTH_alice' }).cls).toBe('head');
    expect(rec({ method: 'DELETE', path: '/bucket/a/b.bin', status: 204, account: 'AUTH_alice' }).cls).toBe('delete');
  });

  it('when a multipart upload runs, then the client requests count (start, parts, listing, completion) and s3api internals do not', () => {
    const acct = { account: 'AUTH_alice' };
    expect(rec({ method: 'POST', path: '/bucket/big%3Fuploads', sent: '320', ...acct }).cls).toBe('post');
    expect(
      rec({ method: 'PUT', path: '/bucket/big%3FpartNumber%3D1%26uploadId%3Dabc', recvd: '5242880', ...acct }),
    ).toMatchObject({ cls: 'put', bytesIn: 5242880 });
    expect(rec({ method: 'GET', path: '/bucket/big%3FuploadId%3Dabc', sent: '900', ...acct }).cls).toBe('list');
    expect(rec({ method: 'POST', path: '/bucket/big%3FuploadId%3Dabc', recvd: '400', sent: '300', ...acct }).cls).toBe(
      'post',
    );
    expect(
      parsed({ method: 'PUT', path: '/v1/AUTH_alice/bucket%2Bsegments/big/abc/1', recvd: '5242880', source: 'S3' })
        .kind,
    ).toBe('skipped');
  });

  it('when an S3 PUT answers with a body (CopyObjectResult), then it is a copy; a PUT of data answers none', () => {
    expect(rec({ method: 'PUT', path: '/bucket/dst', sent: '234', account: 'AUTH_alice' }).cls).toBe('copy');
    expect(rec({ method: 'PUT', path: '/bucket/dst', recvd: '7', account: 'AUTH_alice' }).cls).toBe('put');
    // A refused upload's error body does not make it a copy.
    expect(rec({ method: 'PUT', path: '/bucket/dst', status: 403, sent: '243', account: 'AUTH_alice' }).cls).toBe(
      'put',
    );
  });

  it('when an S3 request names no account (default template, or refused before s3api found one), then it is unattributed', () => {
    expect(parsed({ method: 'GET', path: '/bucket/k', account: '-', status: 403, sent: '243' })).toEqual({
      kind: 'unattributed',
    });
  });
});

describe('batches by class, API and network', () => {
  const networks = parseNetworks('10.0.0.0/8, fd00::/8');
  const batchOf = (lines: string[], address: 'remote_addr' | 'client_ip' = 'remote_addr') => {
    const b = new BatchBuilder(1);
    const copies = new CopyTracker();
    for (const l of lines) {
      const p = parseAccessLine(l);
      if (p.kind === 'skipped' && p.copySource) copies.sawSource(p.copySource);
      const r = p.kind === 'record' ? copies.classify(p.record) : null;
      b.addLine(l, r, r !== null && networks.contains(address === 'client_ip' ? r.clientIp : r.remoteAddr));
    }
    return b.build()!.records;
  };
  const sums = (records: Array<Record<string, unknown>>) =>
    records.reduce<Record<string, number>>((t, r) => {
      for (const f of ['bytes_in', 'bytes_out', 'req_count', ...TRANSFER_DETAIL_FIELD_NAMES])
        t[f] = (t[f] ?? 0) + (r[f] as number);
      return t;
    }, {});

  it('when a mixed workload is summed, then every class, the errors and the S3 and internal shares come out exactly', () => {
    const records = batchOf([
      line({ method: 'PUT', path: '/v1/AUTH_alice/c/a', status: 201, recvd: '100', client: '10.1.2.3' }),
      line({ method: 'GET', path: '/v1/AUTH_alice/c/a', sent: '100', client: '198.51.100.1' }),
      line({ method: 'GET', path: '/v1/AUTH_alice/c/a', status: 499, sent: '40', client: '198.51.100.1' }),
      line({ method: 'GET', path: '/v1/AUTH_alice/c/seg', sent: '100', source: 'SLO' }),
      line({ method: 'GET', path: '/v1/AUTH_alice/c', sent: '60', policy: '-' }),
      line({ method: 'HEAD', path: '/v1/AUTH_alice/c/a', status: 200 }),
      line({ method: 'POST', path: '/v1/AUTH_alice/c/a', status: 202 }),
      line({ method: 'DELETE', path: '/v1/AUTH_alice/c/a', status: 404, sent: '70' }),
      line({ method: 'GET', path: '/v1/AUTH_alice/c/src', sent: '100', source: 'SSC', txn: 'txc1' }),
      line({ method: 'COPY', path: '/v1/AUTH_alice/c/src', status: 201, source: 'SSC', txn: 'txc1' }),
      line({ method: 'OPTIONS', path: '/v1/AUTH_alice/c/a' }),
      line({ method: 'PUT', path: '/bucket/k', recvd: '30', account: 'AUTH_alice', client: 'fd00::7' }),
      line({ method: 'GET', path: '/bucket/k', sent: '30', account: 'AUTH_alice' }),
      line({ method: 'GET', path: '/bucket', sent: '500', account: 'AUTH_alice', policy: '-' }),
    ]);
    expect(sums(records)).toEqual({
      bytes_in: 130,
      bytes_out: 800,
      req_count: 12,
      req_get: 3,
      req_head: 1,
      req_put: 2,
      req_post: 1,
      req_delete: 1,
      req_list: 2,
      req_copy: 1,
      req_other: 1,
      req_errors: 2,
      s3_bytes_in: 30,
      s3_bytes_out: 530,
      s3_req_count: 3,
      internal_bytes_in: 130,
      internal_bytes_out: 0,
      internal_req_count: 2,
    });
  });

  it("when the client's X-Forwarded-For names an internal address, then remote_addr (the default) still bills it as external", () => {
    const forged = line({
      method: 'GET',
      path: '/v1/AUTH_alice/c/a',
      sent: '100',
      client: '10.0.0.1',
      remote: '198.51.100.9',
    });
    expect(sums(batchOf([forged])).internal_req_count).toBe(0);
    expect(sums(batchOf([forged], 'client_ip')).internal_req_count).toBe(1);
  });
});

describe('internal networks', () => {
  it('when CIDRs are given, then addresses inside them (IPv4, IPv6, IPv4-mapped) are internal and others not', () => {
    const n = parseNetworks('10.0.0.0/8,192.168.1.0/24,fd00::/8');
    expect(['10.255.0.1', '192.168.1.9', 'fd00::1', '::ffff:10.0.0.5'].map((a) => n.contains(a))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(['11.0.0.1', '192.168.2.1', '2001:db8::1', '-', 'unknown'].map((a) => n.contains(a))).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(parseNetworks(undefined).contains('10.0.0.1')).toBe(false);
  });

  it('when an entry is not a CIDR, then parsing fails with a sentence naming it', () => {
    expect(() => parseNetworks('10.0.0.0/8,10.0.0.1')).toThrow(/'10.0.0.1' is not a CIDR/);
    expect(() => parseNetworks('10.0.0.0/33')).toThrow(/not a CIDR/);
    expect(() => parseNetworks('example.com/8')).toThrow(/not a CIDR/);
  });
});
