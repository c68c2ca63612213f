import { createHash } from 'node:crypto';
import { isSwiftAccountName } from '@cairn/domain';

/**
 * Swift's proxy-logging access lines, in its default `log_msg_template`:
 *
 *   {client_ip} {remote_addr} {end_time.datetime} {method} {path} {protocol} {status_int} {referer}
 *   {user_agent} {auth_token} {bytes_recvd} {bytes_sent} {client_etag} {transaction_id} {headers}
 *   {request_time} {source} {log_info} {start_time} {end_time} {policy_index}
 *
 * Every field is URL-quoted (so none holds a space) and an empty one is '-'. A syslog prefix
 * ("Nov 24 22:00:01 proxy1 proxy-server: ") may come first, so the message is the line's last 21
 * fields. Requests are attributed to the hour of their start time. Subrequests made by middleware
 * (a `source` such as SLO or versioned_writes) are skipped: the client's own request already
 * carries the bytes it moved.
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

export type ParseResult = { kind: 'record'; record: AccessRecord } | { kind: 'skipped'; reason: 'not-an-account' | 'subrequest' } | { kind: 'malformed'; reason: string };

const count = (field: string): number | null => (field === '-' ? 0 : /^\d{1,16}$/.test(field) ? Number(field) : null);

function decode(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

export function parseAccessLine(line: string): ParseResult {
  const fields = line.trim().split(/\s+/);
  if (fields.length < FIELDS) return { kind: 'malformed', reason: `expected ${FIELDS} fields, found ${fields.length}` };
  const f = fields.slice(fields.length - FIELDS);
  const [, , , method, quotedPath, , statusRaw, , , , recvd, sent, , , , , source, , startRaw, , policyRaw] = f as [string, string, string, string, string, string, string, string, string, string, string, string, string, string, string, string, string, string, string, string, string];
  if (!/^[A-Z]{1,16}$/.test(method)) return { kind: 'malformed', reason: `bad method '${method.slice(0, 20)}'` };
  if (!/^\d{3}$/.test(statusRaw)) return { kind: 'malformed', reason: `bad status '${statusRaw.slice(0, 20)}'` };
  const bytesIn = count(recvd);
  const bytesOut = count(sent);
  if (bytesIn === null || bytesOut === null) return { kind: 'malformed', reason: 'bad byte counts' };
  if (!/^\d{9,11}(\.\d+)?$/.test(startRaw)) return { kind: 'malformed', reason: `bad start time '${startRaw.slice(0, 30)}'` };
  if (policyRaw !== '-' && !/^\d{1,5}$/.test(policyRaw)) return { kind: 'malformed', reason: `bad policy index '${policyRaw.slice(0, 20)}'` };
  // The path field is path_qs quoted once more by the log formatter.
  const pathQs = decode(quotedPath);
  if (pathQs === null || !pathQs.startsWith('/')) return { kind: 'malformed', reason: 'bad path' };
  if (source !== '-') return { kind: 'skipped', reason: 'subrequest' };
  const segments = pathQs.split('?')[0]!.split('/');
  // /v1/<account>[/...]; anything else (/info, /auth/..., /healthcheck) is no account's traffic.
  if (segments[1] !== 'v1' || !segments[2]) return { kind: 'skipped', reason: 'not-an-account' };
  const account = decode(segments[2]);
  // Any name a Swift account can have (AUTH_<user>: spaces and the like included), as the API takes it.
  if (account === null || !isSwiftAccountName(account)) return { kind: 'malformed', reason: 'bad account name' };
  return {
    kind: 'record',
    record: { account, policyIndex: policyRaw === '-' ? null : Number(policyRaw), startMs: Math.floor(Number(startRaw) * 1000), method, status: Number(statusRaw), bytesIn, bytesOut },
  };
}

const HOUR = 3_600_000;

export interface TransferBatch {
  batch_id: string;
  covered: { start: string; end: string };
  records: Array<{ account: string; policy_index: number | null; hour: string; bytes_in: number; bytes_out: number; req_count: number }>;
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
      sum = { account: record.account, policy_index: record.policyIndex, hour: new Date(hourMs).toISOString(), bytes_in: 0, bytes_out: 0, req_count: 0 };
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

  /** Null when no line counted. `coveredFrom`: where the previous batch of this run ended, so runs cover time without gaps. */
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
