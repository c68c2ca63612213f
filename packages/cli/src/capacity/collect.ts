import { pollNodes, readSwiftDir } from '@cairn/swift-cluster';
import { api } from '../api-client';
import type { CollectorRoundOptions } from '../collector-loop';
import type { CollectorConfig } from '../config';
import { buildDeviceReport, storageNodes } from './report';

export type CollectOptions = CollectorRoundOptions;

export interface CollectResult {
  clusterId: number;
  devices: number;
  reported: number;
  warnings: string[];
  /** The signal stopped the round: nothing was sent; `polled` nodes had answered by then. */
  stopped?: { polled: number; nodes: number };
}

/** One attempt per call: the operator reruns a failed collection. */
const once = (config: CollectorConfig, method: string, path: string, body?: unknown) =>
  api(config, method, path, body, 0);

const apiError = (what: string, r: { status: number; json: unknown }) =>
  new Error(
    `${what}: the management API answered ${r.status}: ${(r.json as { error?: string } | null)?.error ?? 'no details'}`,
  );

async function resolveClusterId(config: CollectorConfig, cluster: string): Promise<number> {
  if (/^\d+$/.test(cluster)) return Number(cluster);
  const r = await once(config, 'GET', `/api/v1/clusters/?name=${encodeURIComponent(cluster)}`);
  if (r.status !== 200) throw apiError(`looking up cluster '${cluster}'`, r);
  const found = (r.json as { objects: Array<{ id: number }> }).objects[0];
  if (!found) throw new Error(`the management API has no cluster named '${cluster}'`);
  return found.id;
}

/**
 * One collection round: rings and policies from the swift dir, disk usage from every storage
 * node's recon, one device report to the management API. Nothing is sent when the swift dir is
 * unreadable or corrupt, or when not a single device could be measured.
 */
export async function collectOnce(options: CollectOptions): Promise<CollectResult> {
  const { config } = options;
  if (!config.apiKey)
    throw new Error('CAIRN_API_KEY is not set: the collector needs "<operator>:<key>" to report devices.');
  const progress = options.progress ?? (() => undefined);
  progress(`reading rings in ${options.swiftDir}`);
  const swift = await readSwiftDir(options.swiftDir);
  const nodes = storageNodes(swift);
  progress('polling storage nodes', 0, nodes.length);
  const { signal } = options;
  const polled = await pollNodes(
    nodes,
    { concurrency: config.reconConcurrency, timeoutMs: config.reconTimeoutMs, signal },
    (done, total) => progress('polling storage nodes', done, total),
  );
  // A report replaces the cluster's devices: one from a part of the nodes would hide the others.
  if (signal?.aborted) {
    const answered = polled.filter((p) => p.ok).length;
    return { clusterId: 0, devices: 0, reported: 0, warnings: [], stopped: { polled: answered, nodes: nodes.length } };
  }
  const report = buildDeviceReport(swift, polled);
  report.warnings.forEach(options.warn);
  if (report.reported === 0) {
    throw new Error(
      `nothing could be collected: none of the ${nodes.length} storage node(s) reported disk usage; no report sent`,
    );
  }
  progress('sending the device report');
  const clusterId = await resolveClusterId(config, options.cluster);
  const put = await once(config, 'PUT', `/api/v1/clusters/${clusterId}/devices/`, report.body);
  if (put.status !== 204) throw apiError('sending the device report', put);
  return { clusterId, devices: report.body.devices.length, reported: report.reported, warnings: report.warnings };
}
