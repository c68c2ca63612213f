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
 * The line is read in place, from its end: where each of its last fields starts and ends is kept
 * here (index j: the j-th field from the end), reused line after line, and only the fields a
 * record keeps are copied out. Splitting the line made ~26 strings and an array per line, and the
 * garbage they left was the reader's largest cost at a day of logs.
 */
const fieldStart = new Int32Array(FIELDS + 2);
const fieldEnd = new Int32Array(FIELDS + 2);

/** Whitespace other than the space (`\s` holds tabs and Unicode spaces too). */
const OTHER_WHITESPACE = /[^\S ]/;

/**
 * Finds the bounds of the line's last FIELDS + 1 fields: how many there are (all of the line's,
 * when it has fewer), or -1 when two spaces meet among them (an empty field, which splitting on
 * runs of whitespace would not make; two spaces further left, in the prefix, change none of them).
 */
function findFields(line: string): number {
  let end = line.length;
  let found = 0;
  while (found <= FIELDS) {
    const space = end === 0 ? -1 : line.lastIndexOf(' ', end - 1);
    if (space >= 0 && space === end - 1) return -1;
    found++;
    fieldStart[found] = space + 1;
    fieldEnd[found] = end;
    if (space < 0) break;
    end = space;
  }
  return found;
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/** /^\d{min,max}$/ on line[s, e). */
function digitsAt(line: string, s: number, e: number, min: number, max: number): boolean {
  if (e - s < min || e - s > max) return false;
  for (let i = s; i < e; i++) if (!isDigit(line.charCodeAt(i))) return false;
  return true;
}

const isDashAt = (line: string, s: number, e: number): boolean => e - s === 1 && line.charCodeAt(s) === 45;

/** /^\d{9,11}(\.\d+)?$/ on line[s, e): epoch seconds. */
function isTimeAt(line: string, s: number, e: number): boolean {
  let i = s;
  while (i < e && isDigit(line.charCodeAt(i))) i++;
  if (i - s < 9 || i - s > 11) return false;
  if (i === e) return true;
  if (line.charCodeAt(i) !== 46 || i + 1 === e) return false;
  return digitsAt(line, i + 1, e, 1, Infinity);
}

const isPolicyAt = (line: string, s: number, e: number): boolean => isDashAt(line, s, e) || digitsAt(line, s, e, 1, 5);

/** A whole number of up to 15 digits, read in place (exact below 2^53). */
function smallIntAt(line: string, s: number, e: number): number {
  let n = 0;
  for (let i = s; i < e; i++) n = n * 10 + (line.charCodeAt(i) - 48);
  return n;
}

/** A byte count: '-' is 0; null unless /^\d{1,16}$/. */
function countAt(line: string, s: number, e: number): number | null {
  if (isDashAt(line, s, e)) return 0;
  if (!digitsAt(line, s, e, 1, 16)) return null;
  return e - s <= 15 ? smallIntAt(line, s, e) : Number(line.slice(s, e));
}

/** /^[A-Z]{1,16}$/ on line[s, e). */
function isMethodAt(line: string, s: number, e: number): boolean {
  if (e - s < 1 || e - s > 16) return false;
  for (let i = s; i < e; i++) {
    const c = line.charCodeAt(i);
    if (c < 65 || c > 90) return false;
  }
  return true;
}

/** line[s, e) === text, without copying it out. */
function textAt(line: string, s: number, e: number, text: string): boolean {
  return e - s === text.length && line.startsWith(text, s);
}

/**
 * A GET's class from its path: a listing (an account or a container; S3: the service, a bucket, a
 * multipart upload's parts) or an object read. S3 paths are read path-style (`/bucket/key`).
 */
function getClass(api: Api, path: string, query: string): TransferClass {
  if (api === 'swift') {
    // An object: a non-empty path after /v1/<account>/<container>/ (the account is known non-empty).
    const afterAccount = path.indexOf('/', 4);
    const afterContainer = afterAccount < 0 ? -1 : path.indexOf('/', afterAccount + 1);
    return afterContainer >= 0 && afterContainer < path.length - 1 ? 'get' : 'list';
  }
  // The key: everything after /<bucket>/.
  const afterBucket = path.indexOf('/', 1);
  if (afterBucket < 0 || afterBucket === path.length - 1) return 'list';
  return /(?:^|&)uploadId=/.test(query) ? 'list' : 'get';
}

/** The message's fields this reader uses, by their place in the template (0: client_ip). */
const CLIENT_IP = 0;
const REMOTE_ADDR = 1;
const METHOD = 3;
const PATH = 4;
const STATUS = 6;
const BYTES_RECVD = 10;
const BYTES_SENT = 11;
const TRANSACTION_ID = 13;
const SOURCE = 16;
const START_TIME = 18;
const POLICY_INDEX = 20;
const ACCOUNT = 21;

/**
 * Where field i of the message starts and ends, its last field being the `last`-th from the line's
 * end (FIELDS + 1 with {account}, FIELDS without); before the message comes the syslog prefix.
 */
const fs = (last: number, i: number): number => fieldStart[last - i]!;
const fe = (last: number, i: number): number => fieldEnd[last - i]!;
const text = (line: string, last: number, i: number): string => line.slice(fs(last, i), fe(last, i));

export function parseAccessLine(line: string): ParseResult {
  // Fields are split on any run of whitespace; a line of single spaces (as Swift writes them) is
  // read as it is, any other made so first.
  const regular =
    line.length > 0 &&
    line.charCodeAt(0) !== 32 &&
    line.charCodeAt(line.length - 1) !== 32 &&
    !OTHER_WHITESPACE.test(line);
  let found = regular ? findFields(line) : -1;
  if (found < 0) {
    line = line.trim().split(/\s+/).join(' ');
    found = findFields(line);
  }
  // All of the line's fields are counted when there are at most FIELDS (more are not looked for).
  if (found < FIELDS) return malformed('fields', `expected ${FIELDS} fields, found ${found}`);
  // The template with {account} ends "<start> <end> <policy> <account>"; the default "<start> <end> <policy>".
  const withAccount =
    found > FIELDS &&
    isTimeAt(line, fieldStart[4]!, fieldEnd[4]!) &&
    isTimeAt(line, fieldStart[3]!, fieldEnd[3]!) &&
    isPolicyAt(line, fieldStart[2]!, fieldEnd[2]!);
  const last = withAccount ? FIELDS + 1 : FIELDS;
  if (!isMethodAt(line, fs(last, METHOD), fe(last, METHOD)))
    return malformed('method', `bad method '${text(line, last, METHOD).slice(0, 20)}'`);
  if (!digitsAt(line, fs(last, STATUS), fe(last, STATUS), 3, 3))
    return malformed('status', `bad status '${text(line, last, STATUS).slice(0, 20)}'`);
  const bytesIn = countAt(line, fs(last, BYTES_RECVD), fe(last, BYTES_RECVD));
  const bytesOut = countAt(line, fs(last, BYTES_SENT), fe(last, BYTES_SENT));
  if (bytesIn === null || bytesOut === null) return malformed('bytes', 'bad byte counts');
  if (!isTimeAt(line, fs(last, START_TIME), fe(last, START_TIME)))
    return malformed('start-time', `bad start time '${text(line, last, START_TIME).slice(0, 30)}'`);
  const noPolicy = isDashAt(line, fs(last, POLICY_INDEX), fe(last, POLICY_INDEX));
  if (!noPolicy && !digitsAt(line, fs(last, POLICY_INDEX), fe(last, POLICY_INDEX), 1, 5))
    return malformed('policy', `bad policy index '${text(line, last, POLICY_INDEX).slice(0, 20)}'`);
  // The path field is path_qs quoted once more by the log formatter.
  const pathQs = decode(text(line, last, PATH));
  if (pathQs === null || !pathQs.startsWith('/')) return malformed('path', 'bad path');
  const method = text(line, last, METHOD);
  // The client's own copy request carries the copy middleware's source (see COPY_SOURCE); its read
  // of the source, like every other middleware's subrequest, is not billed again.
  const copySource = textAt(line, fs(last, SOURCE), fe(last, SOURCE), COPY_SOURCE);
  const clientCopy = copySource && (method === 'PUT' || method === 'COPY');
  if (!isDashAt(line, fs(last, SOURCE), fe(last, SOURCE)) && !clientCopy)
    return copySource
      ? { kind: 'skipped', reason: 'subrequest', copySource: text(line, last, TRANSACTION_ID) }
      : { kind: 'skipped', reason: 'subrequest' };
  const queryAt = pathQs.indexOf('?');
  const path = queryAt < 0 ? pathQs : pathQs.slice(0, queryAt);
  // A Swift API path's account (/v1/<account>/…), still quoted as in path_qs; {account} of such a
  // request is the same text.
  let pathAccount: string | undefined;
  if (path.startsWith('/v1/')) {
    const afterAccount = path.indexOf('/', 4);
    pathAccount = path.slice(4, afterAccount < 0 ? path.length : afterAccount) || undefined;
  }
  const logged =
    withAccount && !isDashAt(line, fs(last, ACCOUNT), fe(last, ACCOUNT))
      ? decode(text(line, last, ACCOUNT))
      : undefined;
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
  const status = smallIntAt(line, fs(last, STATUS), fe(last, STATUS));
  let cls = clientCopy ? 'copy' : methodClass;
  if (cls === 'get') cls = getClass(api, path, queryAt < 0 ? '' : pathQs.slice(queryAt + 1));
  // An S3 copy (x-amz-copy-source) answers a PUT with a CopyObjectResult body; a PUT of data answers none.
  else if (cls === 'put' && api === 's3' && status < 300 && bytesOut > 0) cls = 'copy';
  return {
    kind: 'record',
    record: {
      account,
      policyIndex: noPolicy ? null : smallIntAt(line, fs(last, POLICY_INDEX), fe(last, POLICY_INDEX)),
      startMs: Math.floor(Number(text(line, last, START_TIME)) * 1000),
      method,
      status,
      bytesIn,
      bytesOut,
      cls,
      api,
      clientIp: text(line, last, CLIENT_IP),
      remoteAddr: text(line, last, REMOTE_ADDR),
      transactionId: text(line, last, TRANSACTION_ID),
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
  /**
   * The sums by hour, policy (-1: none) and account, found without building a key string per
   * line; and in the order they were first seen, for the batch.
   */
  private readonly byHour = new Map<number, Map<number, Map<string, TransferSums>>>();
  private readonly records: TransferSums[] = [];
  private lines = 0;
  private minMs = Infinity;
  private maxMs = -Infinity;
  /** The last line's hour: lines come in time order, so most share the hour before. */
  private hourMs = NaN;
  private hourIso = '';
  private hourSums = new Map<number, Map<string, TransferSums>>();

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
    if (hourMs !== this.hourMs) {
      this.hourMs = hourMs;
      this.hourIso = new Date(hourMs).toISOString();
      let policies = this.byHour.get(hourMs);
      if (!policies) this.byHour.set(hourMs, (policies = new Map()));
      this.hourSums = policies;
    }
    const policy = record.policyIndex ?? -1;
    let accounts = this.hourSums.get(policy);
    if (!accounts) this.hourSums.set(policy, (accounts = new Map()));
    let sum = accounts.get(record.account);
    if (!sum) {
      sum = { ...ZERO_SUMS };
      sum.account = record.account;
      sum.policy_index = record.policyIndex;
      sum.hour = this.hourIso;
      accounts.set(record.account, sum);
      this.records.push(sum);
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
    if (this.records.length === 0) return null;
    const start = Math.min(this.minMs, coveredFrom ?? Infinity);
    return {
      batch_id: this.digest.digest('hex').slice(0, 48),
      covered: { start: new Date(start).toISOString(), end: new Date(this.maxMs).toISOString() },
      records: this.records,
    };
  }

  get lastMs(): number {
    return this.maxMs;
  }
}
