import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { CollectorConfig } from '../config';
import { BatchBuilder, CopyTracker, parseAccessLine, type MalformedCode } from './access-log';
import { parseNetworks } from './networks';
import { api, apiError, findCluster } from './client';
import { openLogInput } from './log-input';

/**
 * Reads proxy access logs (files, or '-' for stdin; gzip or not, see log-input.ts), sums requests per account, policy
 * and hour,
 * and posts them in batches of `batchLines` lines. Batches are cut at fixed line counts from the
 * start of each input, so reading the same file again yields the same batches with the same ids,
 * which the API counts once: re-running after a crash neither loses nor doubles anything. (A file
 * still being written should be read once it is rotated, or its last batch will differ later.)
 *
 * Lines that name no account (see access-log.ts) are counted and the first ones reported; requests
 * for accounts the cluster never had are left out by the API, which says how many.
 *
 * Lines the API would refuse for their time (older than its hourly retention keeps, or ahead of
 * its clock) are counted, reported and skipped like malformed ones: the window is read from the
 * API once, at the start. They still go into their batch's id, so that a re-run after the window
 * has moved yields the same ids and counts nothing twice.
 */
export interface IngestOptions {
  cluster: string;
  inputs: string[];
  config: CollectorConfig;
  batchLines?: number;
  stdin?: Readable;
  warn: (line: string) => void;
  /** Hears how far each input is read (bytes as stored, of its size when known), for a progress line. */
  progress?: (step: string, done?: number, total?: number) => void;
}

export interface IngestResult {
  clusterId: number;
  lines: number;
  /** Requests billed: read, inside the accepted times, for accounts the cluster has had. */
  requests: number;
  skipped: number;
  /** Requests whose line names no account (S3 requests logged without `{account}`, among others). */
  noAccount: number;
  /** Requests for accounts the cluster never had a user for, as the API answered: not billed. */
  unknownAccount: number;
  malformed: number;
  /** Malformed lines by reason (fields, method, status, bytes, start-time, policy, path, account). */
  malformedByReason: Partial<Record<MalformedCode, number>>;
  /** Lines whose method neither Swift nor HTTP knows: not billed to the account they name. */
  unknownMethod: number;
  /** Requests billed as coming from CAIRN_UTILIZATION_INTERNAL_NETWORKS (before the API's answer). */
  internal: number;
  /** Requests older than the API's hourly retention keeps. */
  tooOld: number;
  /** Requests starting after the API's clock (plus its 15 minutes' leeway). */
  future: number;
  batches: number;
  duplicates: number;
  /** Records (one account, policy and hour each) the API refused as bad; the rest of their batch counted. */
  refused: number;
}

const MAX_REPORTED = 10;
/**
 * Lines this close to the oldest time the API accepts are skipped too: the window moves with the
 * API's clock while a long file is read.
 */
const OLD_MARGIN_MS = 3_600_000;

async function writeWindow(config: CollectorConfig, clusterId: number): Promise<{ oldest: number; latest: number }> {
  const r = await api(config, 'GET', `/api/v1/clusters/${clusterId}/utilization/window/`);
  if (r.status !== 200) throw apiError('reading the times the API accepts', r);
  const w = r.json as { oldest: string; latest: string };
  return { oldest: Date.parse(w.oldest) + OLD_MARGIN_MS, latest: Date.parse(w.latest) };
}

export async function ingestLogs(options: IngestOptions): Promise<IngestResult> {
  const { config } = options;
  if (!config.apiKey)
    throw new Error('CAIRN_API_KEY is not set: the collector needs "<operator>:<key>" to record utilization.');
  const cluster = await findCluster(config, options.cluster);
  const batchLines = options.batchLines ?? 20_000;
  const result: IngestResult = {
    clusterId: cluster.id,
    lines: 0,
    requests: 0,
    skipped: 0,
    noAccount: 0,
    unknownAccount: 0,
    malformed: 0,
    malformedByReason: {},
    unknownMethod: 0,
    internal: 0,
    tooOld: 0,
    future: 0,
    batches: 0,
    duplicates: 0,
    refused: 0,
  };
  const window = await writeWindow(config, cluster.id);
  const internalNetworks = parseNetworks(config.utilizationInternalNetworks);
  const internalAddress = config.utilizationInternalAddress ?? 'remote_addr';
  // Across inputs: a copy's read of its source may be the last line of the file before.
  const copies = new CopyTracker();
  let outside = 0;

  const send = async (builder: BatchBuilder, coveredFrom: number | undefined) => {
    const batch = builder.build(coveredFrom);
    if (!batch) return;
    const r = await api(config, 'POST', `/api/v1/clusters/${cluster.id}/utilization/transfer/`, batch);
    if (r.status !== 200) throw apiError(`recording transfer batch ${batch.batch_id}`, r);
    result.batches++;
    const answer = r.json as {
      duplicate?: boolean;
      unattributed?: { records: number; requests: number };
      refused?: Array<{ index: number; reason: string }>;
      refused_count?: number;
    };
    if (answer.duplicate) result.duplicates++;
    // The API bills only accounts the cluster has had a user for; it says how many requests it left out.
    const unknown = answer.unattributed?.requests ?? 0;
    result.unknownAccount += unknown;
    result.requests -= unknown;
    // The API keeps a batch's good records and names the bad ones (a policy index the cluster's
    // device report does not list, say): their requests are not counted; say so, and go on.
    for (const refused of answer.refused ?? []) {
      if (result.refused++ < MAX_REPORTED)
        options.warn(`batch ${batch.batch_id}: record ${refused.index} refused by the API: ${refused.reason}`);
    }
    result.refused += (answer.refused_count ?? 0) - (answer.refused?.length ?? 0);
  };

  // One batch is posted while the next is read: the API stores one as this process parses the
  // other, so a run takes the longer of the two rather than their sum. One at a time, so that a
  // refusal stops the run one batch later at most, and batches go in the order of their lines.
  let posting: Promise<void> = Promise.resolve();
  const post = async (builder: BatchBuilder, coveredFrom: number | undefined) => {
    await posting;
    posting = send(builder, coveredFrom);
    // Seen when awaited (the next post, or the end); until then it must not count as unhandled.
    posting.catch(() => {});
  };

  for (const input of options.inputs.length ? options.inputs : ['-']) {
    const name = input === '-' ? 'stdin' : input;
    const opened = await openLogInput(input, options.stdin ?? process.stdin);
    const lines = createInterface({ input: opened.text, crlfDelay: Infinity });
    let builder = new BatchBuilder(cluster.id);
    let coveredFrom: number | undefined;
    let lineNo = 0;
    // Bytes as stored (compressed for gzip) of the file's size; a pipe has no size: lines only.
    const showProgress = () =>
      options.progress?.(
        `reading ${name}, line ${lineNo}`,
        opened.size === undefined ? undefined : opened.bytesRead(),
        opened.size,
      );
    try {
      for await (const line of lines) {
        if (lineNo % 1000 === 0) showProgress();
        lineNo++;
        if (!line.trim()) continue;
        result.lines++;
        const parsed = parseAccessLine(line);
        let record = parsed.kind === 'record' ? parsed.record : null;
        if (parsed.kind === 'malformed') {
          result.malformed++;
          result.malformedByReason[parsed.code] = (result.malformedByReason[parsed.code] ?? 0) + 1;
          if (result.malformed <= MAX_REPORTED) options.warn(`${name}:${lineNo}: malformed line (${parsed.reason})`);
        } else if (parsed.kind === 'unknown-method') {
          if (++result.unknownMethod <= MAX_REPORTED)
            options.warn(`${name}:${lineNo}: unknown method '${parsed.method.slice(0, 20)}', not billed`);
        } else if (parsed.kind === 'skipped') {
          if (parsed.copySource) copies.sawSource(parsed.copySource);
          result.skipped++;
        } else if (parsed.kind === 'unattributed') {
          if (++result.noAccount <= MAX_REPORTED)
            options.warn(
              `${name}:${lineNo}: request with no account, not billed (an S3 request? log Swift's {account} field: see docs/utilization.md)`,
            );
        } else if (parsed.record.startMs < window.oldest || parsed.record.startMs > window.latest) {
          const old = parsed.record.startMs < window.oldest;
          if (old) result.tooOld++;
          else result.future++;
          if (++outside <= MAX_REPORTED) {
            const when = new Date(parsed.record.startMs).toISOString();
            options.warn(
              `${name}:${lineNo}: request at ${when} skipped: ${old ? `older than the API keeps hourly records (${new Date(window.oldest).toISOString()})` : `later than the API's clock allows (${new Date(window.latest).toISOString()}); check the proxy's clock`}`,
            );
          }
          record = null;
        } else {
          result.requests++;
        }
        let internal = false;
        if (record) {
          record = copies.classify(record);
          internal = internalNetworks.contains(internalAddress === 'client_ip' ? record.clientIp : record.remoteAddr);
          if (internal) result.internal++;
        }
        builder.addLine(line, record, internal);
        if (builder.lineCount >= batchLines) {
          await post(builder, coveredFrom);
          if (Number.isFinite(builder.lastMs)) coveredFrom = builder.lastMs;
          builder = new BatchBuilder(cluster.id);
        }
      }
    } catch (e) {
      // zlib's codes: a truncated or corrupt .gz (a rotation still being written, a bad copy).
      if (String((e as { code?: unknown }).code).startsWith('Z_'))
        throw new Error(`${name}: not a readable gzip file (${(e as Error).message})`);
      throw e;
    }
    showProgress();
    await post(builder, coveredFrom);
  }
  await posting;
  if (result.malformed > MAX_REPORTED)
    options.warn(`${result.malformed - MAX_REPORTED} more malformed line(s) not shown`);
  if (result.unknownMethod > MAX_REPORTED)
    options.warn(`${result.unknownMethod - MAX_REPORTED} more line(s) with an unknown method not shown`);
  if (result.noAccount > MAX_REPORTED)
    options.warn(`${result.noAccount - MAX_REPORTED} more request(s) with no account not shown`);
  if (outside > MAX_REPORTED)
    options.warn(`${outside - MAX_REPORTED} more request(s) outside the accepted times not shown`);
  if (result.refused > MAX_REPORTED) options.warn(`${result.refused - MAX_REPORTED} more refused record(s) not shown`);
  return result;
}
