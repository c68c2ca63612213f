import { createHash } from 'node:crypto';
import { isSwiftAccountName } from '@cairn/domain';

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
 * the bytes it moved.
 *
 * The account: a Swift API request names it in its path (`/v1/<account>/…`). An S3 request
 * (`PUT /bucket/key`) does not; only `{account}` names it, which Swift takes from the Swift path
 * s3api made of it (`swift.backend_path`). A request with neither is unattributed: counted and
 * reported, never billed to anyone.
 */
export const FIELDS = 21;

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
}

export type ParseResult =
  | { kind: 'record'; record: AccessRecord }
  | { kind: 'skipped'; reason: 'not-an-account' | 'subrequest' }
  /** No account in the line: an S3 request logged without `{account}`, or one refused before it reached an account. */
  | { kind: 'unattributed' }
  | { kind: 'malformed'; reason: string };

const count = (field: string): number | null => (field === '-' ? 0 : /^\d{1,16}$/.test(field) ? Number(field) : null);
const isTime = (field: string | undefined): boolean => field !== undefined && /^\d{9,11}(\.\d+)?$/.test(field);
const isPolicy = (field: string | undefined): boolean =>
  field === '-' || (field !== undefined && /^\d{1,5}$/.test(field));

/** Paths the proxy answers itself, for no account: never anyone's traffic. */
const SWIFT_OWN_PATH = /^\/(?:info|healthcheck|crossdomain\.xml|v1\/?|auth(?:\/.*)?)$/;

function decode(s: string): string | null {
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
  const codes = [...s].map((c) => c.codePointAt(0)!);
  if (!codes.some((c) => c >= 0x80) || codes.some((c) => c > 0xff)) return s;
  try {
    return utf8.decode(Buffer.from(s, 'latin1'));
  } catch {
    return s;
  }
}

export function parseAccessLine(line: string): ParseResult {
  const fields = line.trim().split(/\s+/);
  if (fields.length < FIELDS) return { kind: 'malformed', reason: `expected ${FIELDS} fields, found ${fields.length}` };
  // The template with {account} ends "<start> <end> <policy> <account>"; the default "<start> <end> <policy>".
  const withAccount =
    fields.length > FIELDS && isTime(fields.at(-4)) && isTime(fields.at(-3)) && isPolicy(fields.at(-2));
  const f = fields.slice(fields.length - FIELDS - (withAccount ? 1 : 0));
  const [
    ,
    ,
    ,
    method,
    quotedPath,
    ,
    statusRaw,
    ,
    ,
    ,
    recvd,
    sent,
    ,
    ,
    ,
    ,
    source,
    ,
    startRaw,
    ,
    policyRaw,
    accountRaw,
  ] = f as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string | undefined,
  ];
  if (!/^[A-Z]{1,16}$/.test(method)) return { kind: 'malformed', reason: `bad method '${method.slice(0, 20)}'` };
  if (!/^\d{3}$/.test(statusRaw)) return { kind: 'malformed', reason: `bad status '${statusRaw.slice(0, 20)}'` };
  const bytesIn = count(recvd);
  const bytesOut = count(sent);
  if (bytesIn === null || bytesOut === null) return { kind: 'malformed', reason: 'bad byte counts' };
  if (!/^\d{9,11}(\.\d+)?$/.test(startRaw))
    return { kind: 'malformed', reason: `bad start time '${startRaw.slice(0, 30)}'` };
  if (!isPolicy(policyRaw)) return { kind: 'malformed', reason: `bad policy index '${policyRaw.slice(0, 20)}'` };
  // The path field is path_qs quoted once more by the log formatter.
  const pathQs = decode(quotedPath);
  if (pathQs === null || !pathQs.startsWith('/')) return { kind: 'malformed', reason: 'bad path' };
  if (source !== '-') return { kind: 'skipped', reason: 'subrequest' };
  const path = pathQs.split('?')[0]!;
  const segments = path.split('/');
  // A Swift API path's account, still quoted as in path_qs; {account} of such a request is the same text.
  const pathAccount = segments[1] === 'v1' && segments[2] ? segments[2] : undefined;
  const logged = accountRaw !== undefined && accountRaw !== '-' ? decode(accountRaw) : undefined;
  if (logged === null) return { kind: 'malformed', reason: 'bad account name' };
  let account: string | null;
  if (logged !== undefined && logged !== pathAccount) account = fromWsgi(logged);
  else if (pathAccount) account = decode(pathAccount);
  else if (SWIFT_OWN_PATH.test(path)) return { kind: 'skipped', reason: 'not-an-account' };
  else return { kind: 'unattributed' };
  // Any name a Swift account can have (AUTH_<user>: spaces and the like included), as the API takes it.
  if (account === null || !isSwiftAccountName(account)) return { kind: 'malformed', reason: 'bad account name' };
  return {
    kind: 'record',
    record: {
      account,
      policyIndex: policyRaw === '-' ? null : Number(policyRaw),
      startMs: Math.floor(Number(startRaw) * 1000),
      method,
      status: Number(statusRaw),
      bytesIn,
      bytesOut,
    },
  };
}

const HOUR = 3_600_000;

export interface TransferBatch {
  batch_id: string;
  covered: { start: string; end: string };
  records: Array<{
    account: string;
    policy_index: number | null;
    hour: string;
    bytes_in: number;
    bytes_out: number;
    req_count: number;
  }>;
}

/**
 * Sums of a run of lines per account, policy and hour. The batch id is a digest of the lines
 * themselves (and the cluster), so the same lines sent again, after a crash or a re-run over the
 * same file, are recognised by the API and not counted twice.
 */
export class BatchBuilder {
  private readonly digest = createHash('sha256');
  private readonly sums = new Map<string, TransferBatch['records'][number]>();
  private lines = 0;
  private minMs = Infinity;
  private maxMs = -Infinity;

  constructor(clusterId: number) {
    this.digest.update(`cairn-transfer:${clusterId}\n`);
  }

  /** Every line read goes into the digest, even the ones that count for nothing. */
  addLine(line: string, record: AccessRecord | null): void {
    this.digest.update(line.trim()).update('\n');
    this.lines++;
    if (!record) return;
    const hourMs = Math.floor(record.startMs / HOUR) * HOUR;
    const key = `${record.account}\u0000${record.policyIndex ?? '-'}\u0000${hourMs}`;
    let sum = this.sums.get(key);
    if (!sum) {
      sum = {
        account: record.account,
        policy_index: record.policyIndex,
        hour: new Date(hourMs).toISOString(),
        bytes_in: 0,
        bytes_out: 0,
        req_count: 0,
      };
      this.sums.set(key, sum);
    }
    sum.bytes_in += record.bytesIn;
    sum.bytes_out += record.bytesOut;
    sum.req_count += 1;
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
