import { createHash } from 'node:crypto';
import {
  isSwiftAccountName,
  TRANSFER_CLASSES,
  TRANSFER_DETAIL_FIELD_NAMES,
  classField,
  type TransferClass,
  type TransferDetailField,
} from '@cairn/domain';

/**
 * Swift's proxy-logging access lines, in its default `log_msg_template`:
 *
 *   {client_ip} {remote_addr} {end_time.datetime} {method} {path} {protocol} {status_int} {referer}
 *   {user_agent} {auth_token} {bytes_recvd} {bytes_sent} {client_etag} {transaction_id} {headers}
 *   {request_time} {source} {log_info} {start_time} {end_time} {policy_index}
 *
 * or in that template followed by ` {account}` (docs/utilization.md). Every field is URL-quoted (so
 * none holds a space) and an empty one is '-'. A syslog prefix ("Nov 24 22:00:01 proxy1
 * proxy-server: ") may come first, so the message is read from the line's end: the default ends
 * in two times and a policy index, the longer one in two times, a policy index and the account.
 * Requests are attributed to the hour of their start time. Subrequests made by middleware (a
 * `source` such as SLO or versioned_writes) are skipped: the client's own request already carries
 * the bytes it moved. The one line with a source that is the client's own is a server-side copy's
 * (COPY_SOURCE below).
 *
 * The account: a Swift API request names it in its path (`/v1/<account>/…`). An S3 request
 * (`PUT /bucket/key`) does not; only `{account}` names it, which Swift takes from the Swift path
 * s3api made of it (`swift.backend_path`). A request with neither is unattributed: counted and
 * reported, never billed to anyone.
 */
export const FIELDS = 21;

export type Api = 'swift' | 's3';

export interface AccessRecord {
  account: string;
  /** null for requests no policy applies to (account and container requests). */
  policyIndex: number | null;
  /** Epoch ms of the request's start. */
  startMs: number;
  method: string;
  status: number;
  bytesIn: number;
  bytesOut: number;
  /** The request's class (docs/utilization.md); an S3 PUT may still turn out a copy (see CopyTracker). */
  cls: TransferClass;
  api: Api;
  /** `{client_ip}` (X-Forwarded-For or the peer) and `{remote_addr}` (the TCP peer). */
  clientIp: string;
  remoteAddr: string;
  transactionId: string;
}

/** Why a line is refused: each counted apart in the ingest's result. */
export type MalformedCode = 'fields' | 'method' | 'status' | 'bytes' | 'start-time' | 'policy' | 'path' | 'account';

export type ParseResult =
  | { kind: 'record'; record: AccessRecord }
  /** `copySource`: the transaction of a server-side copy's read of its source (see CopyTracker). */
  | { kind: 'skipped'; reason: 'not-an-account' | 'subrequest'; copySource?: string }
  /** No account in the line: an S3 request logged without `{account}`, or one refused before it reached an account. */
  | { kind: 'unattributed' }
  /** A method neither Swift nor HTTP knows: nobody's billable request, whatever account it named. */
  | { kind: 'unknown-method'; method: string }
  | { kind: 'malformed'; code: MalformedCode; reason: string };

const count = (field: string): number | null => (field === '-' ? 0 : /^\d{1,16}$/.test(field) ? Number(field) : null);
const isTime = (field: string | undefined): boolean => field !== undefined && /^\d{9,11}(\.\d+)?$/.test(field);
const isPolicy = (field: string | undefined): boolean =>
  field === '-' || (field !== undefined && /^\d{1,5}$/.test(field));

/** Paths the proxy answers itself, for no account: never anyone's traffic. */
const SWIFT_OWN_PATH = /^\/(?:info|healthcheck|crossdomain\.xml|v1\/?|auth(?:\/.*)?)$/;

/**
 * Methods and their class. GET is a listing or an object read by its path (below). COPY is
 * Swift's server-side copy. Other methods HTTP defines reach the proxy as requests of an account
 * (Swift answers OPTIONS for CORS, the rest with 405) and are `other`; anything else is not HTTP.
 */
const METHOD_CLASS: Readonly<Record<string, TransferClass>> = {
  GET: 'get',
  HEAD: 'head',
  PUT: 'put',
  POST: 'post',
  DELETE: 'delete',
  COPY: 'copy',
  OPTIONS: 'other',
  PATCH: 'other',
  TRACE: 'other',
  CONNECT: 'other',
};

/**
 * Swift's copy middleware (`swift.source` SSC) reads the source with a subrequest of its own (a GET
 * or HEAD, logged with source SSC), then turns the client's own request into the PUT that writes
 * the copy, in the client's WSGI environment: the client's line itself is logged with source SSC
 * and as the method the client sent (COPY, or PUT with X-Copy-From).
 */
const COPY_SOURCE = 'SSC';

function decode(s: string): string | null {
  // Most fields hold nothing quoted: the same text, without the call.
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * `{account}` of an S3 request, decoded once. Swift quoted it from its WSGI path, in which each
 * byte of a UTF-8 name is one character (U+0000–U+00FF): those are turned back into the name.
 */
function fromWsgi(s: string): string {
  let high = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0xff) return s;
    if (c >= 0x80) high = true;
  }
  if (!high) return s;
  try {
    return utf8.decode(Buffer.from(s, 'latin1'));
  } catch {
    return s;
  }
}

const malformed = (code: MalformedCode, reason: string): ParseResult => ({ kind: 'malformed', code, reason });

/**
 * A GET's class from its path: a listing (an account or a container; S3: the service, a bucket, a
 * multipart upload's parts) or an object read. S3 paths are read path-style (`/bucket/key`).
 */
function getClass(api: Api, segments: string[], query: string): TransferClass {
  // An object: a non-empty path after /v1/<account>/<container>/ (two or more segments are never empty).
  if (api === 'swift') return segments.length > 5 || (segments.length === 5 && segments[4] !== '') ? 'get' : 'list';
  const key = segments.slice(2).join('/');
  if (key === '') return 'list';
  return /(?:^|&)uploadId=/.test(query) ? 'list' : 'get';
}

/** Whitespace other than one space between fields: only such a line needs the slower split. */
const IRREGULAR_SPACE = /[^\S ]| {2}|^ | $/;

export function parseAccessLine(line: string): ParseResult {
  const fields = IRREGULAR_SPACE.test(line) ? line.trim().split(/\s+/) : line.split(' ');
  if (fields.length < FIELDS) return malformed('fields', `expected ${FIELDS} fields, found ${fields.length}`);
  // The template with {account} ends "<start> <end> <policy> <account>"; the default "<start> <end> <policy>".
  const withAccount =
    fields.length > FIELDS && isTime(fields.at(-4)) && isTime(fields.at(-3)) && isPolicy(fields.at(-2));
  // The message's first field: what comes before it is the syslog prefix.
  const o = fields.length - FIELDS - (withAccount ? 1 : 0);
  const clientIp = fields[o]!;
  const remoteAddr = fields[o + 1]!;
  const method = fields[o + 3]!;
  const quotedPath = fields[o + 4]!;
  const statusRaw = fields[o + 6]!;
  const recvd = fields[o + 10]!;
  const sent = fields[o + 11]!;
  const transactionId = fields[o + 13]!;
  const source = fields[o + 16]!;
  const startRaw = fields[o + 18]!;
  const policyRaw = fields[o + 20]!;
  const accountRaw = fields[o + 21];
  if (!/^[A-Z]{1,16}$/.test(method)) return malformed('method', `bad method '${method.slice(0, 20)}'`);
  if (!/^\d{3}$/.test(statusRaw)) return malformed('status', `bad status '${statusRaw.slice(0, 20)}'`);
  const bytesIn = count(recvd);
  const bytesOut = count(sent);
  if (bytesIn === null || bytesOut === null) return malformed('bytes', 'bad byte counts');
  if (!/^\d{9,11}(\.\d+)?$/.test(startRaw)) return malformed('start-time', `bad start time '${startRaw.slice(0, 30)}'`);
  if (!isPolicy(policyRaw)) return malformed('policy', `bad policy index '${policyRaw.slice(0, 20)}'`);
  // The path field is path_qs quoted once more by the log formatter.
  const pathQs = decode(quotedPath);
  if (pathQs === null || !pathQs.startsWith('/')) return malformed('path', 'bad path');
  // The client's own copy request carries the copy middleware's source (see COPY_SOURCE); its read
  // of the source, like every other middleware's subrequest, is not billed again.
  const clientCopy = source === COPY_SOURCE && (method === 'PUT' || method === 'COPY');
  if (source !== '-' && !clientCopy)
    return source === COPY_SOURCE
      ? { kind: 'skipped', reason: 'subrequest', copySource: transactionId }
      : { kind: 'skipped', reason: 'subrequest' };
  const queryAt = pathQs.indexOf('?');
  const path = queryAt < 0 ? pathQs : pathQs.slice(0, queryAt);
  const query = queryAt < 0 ? '' : pathQs.slice(queryAt + 1);
  const segments = path.split('/');
  // A Swift API path's account, still quoted as in path_qs; {account} of such a request is the same text.
  const pathAccount = segments[1] === 'v1' && segments[2] ? segments[2] : undefined;
  const logged = accountRaw !== undefined && accountRaw !== '-' ? decode(accountRaw) : undefined;
  if (logged === null) return malformed('account', 'bad account name');
  let account: string | null;
  if (logged !== undefined && logged !== pathAccount) account = fromWsgi(logged);
  else if (pathAccount) account = decode(pathAccount);
  else if (SWIFT_OWN_PATH.test(path)) return { kind: 'skipped', reason: 'not-an-account' };
  else return { kind: 'unattributed' };
  // Any name a Swift account can have (AUTH_<user>: spaces and the like included), as the API takes it.
  if (account === null || !isSwiftAccountName(account)) return malformed('account', 'bad account name');
  const methodClass = METHOD_CLASS[method];
  if (methodClass === undefined) return { kind: 'unknown-method', method };
  // s3api's requests are the ones whose path is not the Swift API's: Swift's {account} named their owner.
  const api: Api = pathAccount ? 'swift' : 's3';
  const status = Number(statusRaw);
  let cls = clientCopy ? 'copy' : methodClass;
  if (cls === 'get') cls = getClass(api, segments, query);
  // An S3 copy (x-amz-copy-source) answers a PUT with a CopyObjectResult body; a PUT of data answers none.
  else if (cls === 'put' && api === 's3' && status < 300 && bytesOut > 0) cls = 'copy';
  return {
    kind: 'record',
    record: {
      account,
      policyIndex: policyRaw === '-' ? null : Number(policyRaw),
      startMs: Math.floor(Number(startRaw) * 1000),
      method,
      status,
      bytesIn,
      bytesOut,
      cls,
      api,
      clientIp,
      remoteAddr,
      transactionId,
    },
  };
}

/**
 * Server-side copies the client's own line does not show: an S3 copy (s3api turns it into a Swift
 * PUT with X-Copy-From in an environment of its own, which is not logged again) and a Swift copy
 * refused before it wrote (its line has no SSC source) are PUT lines whose transaction also logged
 * the copy middleware's read of the source. That read ends, and is logged, before the request that
 * made it: the transactions of the last reads seen are kept, and a PUT among them is a copy.
 */
export class CopyTracker {
  private readonly seen = new Set<string>();

  constructor(private readonly keep = 10_000) {}

  sawSource(transactionId: string): void {
    if (transactionId === '-') return;
    this.seen.add(transactionId);
    if (this.seen.size > this.keep) this.seen.delete(this.seen.values().next().value as string);
  }

  /** The record, with a PUT that read a copy source counted as a copy. */
  classify(record: AccessRecord): AccessRecord {
    if (record.cls === 'put' && this.seen.has(record.transactionId)) return { ...record, cls: 'copy' };
    return record;
  }
}

const HOUR = 3_600_000;

/**
 * A new sum is a copy of this one (a clone keeps one object shape for every sum, where building
 * each from the field list made a slow dictionary object per account and hour), and a class's
 * field is looked up here rather than built as a string per line.
 */
const ZERO_SUMS: TransferSums = {
  account: '',
  policy_index: null,
  hour: '',
  bytes_in: 0,
  bytes_out: 0,
  req_count: 0,
  ...(Object.fromEntries(TRANSFER_DETAIL_FIELD_NAMES.map((f) => [f, 0])) as Record<TransferDetailField, number>),
};
const CLASS_FIELD = Object.fromEntries(TRANSFER_CLASSES.map((c) => [c, classField(c)])) as Record<
  TransferClass,
  TransferDetailField
>;

export type TransferSums = {
  account: string;
  policy_index: number | null;
  hour: string;
  bytes_in: number;
  bytes_out: number;
  req_count: number;
} & Record<TransferDetailField, number>;

export interface TransferBatch {
  batch_id: string;
  covered: { start: string; end: string };
  records: TransferSums[];
}

/**
 * Sums of a run of lines per account, policy and hour. The batch id is a digest of the lines
 * themselves (and the cluster), so the same lines sent again, after a crash or a re-run over the
 * same file, are recognised by the API and not counted twice.
 */
export class BatchBuilder {
  private readonly digest = createHash('sha256');
  private readonly sums = new Map<string, TransferSums>();
  private lines = 0;
  private minMs = Infinity;
  private maxMs = -Infinity;
  /** The last hour's ISO text: lines come in time order, so most share the hour before. */
  private hourMs = NaN;
  private hourIso = '';

  constructor(clusterId: number) {
    this.digest.update(`cairn-transfer:${clusterId}\n`);
  }

  /**
   * Every line read goes into the digest, even the ones that count for nothing. `internal`: the
   * request came from one of the provider's internal networks.
   */
  addLine(line: string, record: AccessRecord | null, internal = false): void {
    this.digest.update(line.trim()).update('\n');
    this.lines++;
    if (!record) return;
    const hourMs = Math.floor(record.startMs / HOUR) * HOUR;
    const key = `${record.account}\u0000${record.policyIndex ?? '-'}\u0000${hourMs}`;
    let sum = this.sums.get(key);
    if (!sum) {
      if (hourMs !== this.hourMs) {
        this.hourMs = hourMs;
        this.hourIso = new Date(hourMs).toISOString();
      }
      sum = { ...ZERO_SUMS };
      sum.account = record.account;
      sum.policy_index = record.policyIndex;
      sum.hour = this.hourIso;
      this.sums.set(key, sum);
    }
    sum.bytes_in += record.bytesIn;
    sum.bytes_out += record.bytesOut;
    sum.req_count += 1;
    sum[CLASS_FIELD[record.cls]] += 1;
    // 499: proxy-logging's status for a client that went away before the response ended.
    if (record.status >= 400) sum.req_errors += 1;
    if (record.api === 's3') {
      sum.s3_bytes_in += record.bytesIn;
      sum.s3_bytes_out += record.bytesOut;
      sum.s3_req_count += 1;
    }
    if (internal) {
      sum.internal_bytes_in += record.bytesIn;
      sum.internal_bytes_out += record.bytesOut;
      sum.internal_req_count += 1;
    }
    this.minMs = Math.min(this.minMs, record.startMs);
    this.maxMs = Math.max(this.maxMs, record.startMs);
  }

  get lineCount(): number {
    return this.lines;
  }

  /**
   * Null when no line counted. `coveredFrom`: where the previous batch of this run ended, so runs cover time without
   * gaps.
   */
  build(coveredFrom?: number): TransferBatch | null {
    if (this.sums.size === 0) return null;
    const start = Math.min(this.minMs, coveredFrom ?? Infinity);
    return {
      batch_id: this.digest.digest('hex').slice(0, 48),
      covered: { start: new Date(start).toISOString(), end: new Date(this.maxMs).toISOString() },
      records: [...this.sums.values()],
    };
  }

  get lastMs(): number {
    return this.maxMs;
  }
}
