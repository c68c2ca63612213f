import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { CollectorConfig } from '../config';
import { BatchBuilder, parseAccessLine } from './access-log';
import { api, apiError, findCluster } from './client';

/**
 * Reads proxy access logs (files, or '-' for stdin), sums requests per account, policy and hour,
 * and posts them in batches of `batchLines` lines. Batches are cut at fixed line counts from the
 * start of each input, so reading the same file again yields the same batches with the same ids,
 * which the API counts once: re-running after a crash neither loses nor doubles anything. (A file
 * still being written should be read once it is rotated, or its last batch will differ later.)
 */
export interface IngestOptions {
  cluster: string;
  inputs: string[];
  config: CollectorConfig;
  batchLines?: number;
  stdin?: Readable;
  warn: (line: string) => void;
}

export interface IngestResult {
  clusterId: number;
  lines: number;
  requests: number;
  skipped: number;
  malformed: number;
  batches: number;
  duplicates: number;
}

const MAX_REPORTED = 10;

export async function ingestLogs(options: IngestOptions): Promise<IngestResult> {
  const { config } = options;
  if (!config.apiKey) throw new Error('CAIRN_API_KEY is not set: the collector needs "<operator>:<key>" to record utilization.');
  const cluster = await findCluster(config, options.cluster);
  const batchLines = options.batchLines ?? 20_000;
  const result: IngestResult = { clusterId: cluster.id, lines: 0, requests: 0, skipped: 0, malformed: 0, batches: 0, duplicates: 0 };

  const send = async (builder: BatchBuilder, coveredFrom: number | undefined) => {
    const batch = builder.build(coveredFrom);
    if (!batch) return;
    const r = await api(config, 'POST', `/api/v1/clusters/${cluster.id}/utilization/transfer/`, batch);
    if (r.status !== 200) throw apiError(`recording transfer batch ${batch.batch_id}`, r);
    result.batches++;
    if ((r.json as { duplicate?: boolean }).duplicate) result.duplicates++;
  };

  for (const input of options.inputs.length ? options.inputs : ['-']) {
    const stream = input === '-' ? (options.stdin ?? process.stdin) : createReadStream(input);
    const lines = createInterface({ input: stream, crlfDelay: Infinity });
    let builder = new BatchBuilder(cluster.id);
    let coveredFrom: number | undefined;
    let lineNo = 0;
    for await (const line of lines) {
      lineNo++;
      if (!line.trim()) continue;
      result.lines++;
      const parsed = parseAccessLine(line);
      if (parsed.kind === 'malformed') {
        result.malformed++;
        if (result.malformed <= MAX_REPORTED) options.warn(`${input === '-' ? 'stdin' : input}:${lineNo}: malformed line (${parsed.reason})`);
      } else if (parsed.kind === 'skipped') {
        result.skipped++;
      } else {
        result.requests++;
      }
      builder.addLine(line, parsed.kind === 'record' ? parsed.record : null);
      if (builder.lineCount >= batchLines) {
        await send(builder, coveredFrom);
        if (Number.isFinite(builder.lastMs)) coveredFrom = builder.lastMs;
        builder = new BatchBuilder(cluster.id);
      }
    }
    await send(builder, coveredFrom);
  }
  if (result.malformed > MAX_REPORTED) options.warn(`${result.malformed - MAX_REPORTED} more malformed line(s) not shown`);
  return result;
}
