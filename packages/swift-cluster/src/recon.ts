import { getMaxListeners, setMaxListeners } from 'node:events';
import { ReconError } from './errors';
import { httpGet, type Get, type GetResponse } from './http-get';
import { mapConcurrent } from './pool';

/**
 * Swift's recon middleware, `GET /recon/diskusage`: one entry per directory in a storage server's
 * devices path. Recon's `used` is `size − avail` (root-reserved blocks count as used).
 */
export interface DiskUsage {
  device: string;
  /** Only a literal `mounted: true` counts as mounted; then size, used and avail are byte counts. */
  mounted: boolean;
  size: number | null;
  used: number | null;
  avail: number | null;
  /** The error text recon reports in `mounted` when checking the mount failed (e.g. an I/O error). */
  mountError?: string;
}

export interface ReconOptions {
  /** Covers the whole exchange: connecting, the response and its body. */
  timeoutMs: number;
  /** Defaults to a GET on node:http (http-get.ts); a fetch function works too (tests inject one). */
  fetch?: typeof fetch;
  /** Abandons the request (a collector asked to stop): the node then fails with "stopped". */
  signal?: AbortSignal;
}

export interface ReconNode {
  ip: string;
  port: number;
}

export type NodeDiskUsage =
  { node: ReconNode; ok: true; devices: DiskUsage[] } | { node: ReconNode; ok: false; error: ReconError };

export interface PollOptions extends ReconOptions {
  /** Most requests in flight at once. */
  concurrency: number;
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

function parseDiskUsage(body: unknown, node: string): DiskUsage[] {
  if (!Array.isArray(body)) {
    throw new ReconError(
      node,
      `expected a JSON list from /recon/diskusage, got ${body === null ? 'null' : typeof body}`,
    );
  }
  const seen = new Set<string>();
  return body.map((entry: unknown, i): DiskUsage => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
      throw new ReconError(node, `entry ${i} is not an object`);
    const e = entry as Record<string, unknown>;
    const device = e['device'];
    if (typeof device !== 'string' || device === '') throw new ReconError(node, `entry ${i} has no device name`);
    if (seen.has(device)) throw new ReconError(node, `device ${device} is listed twice`);
    seen.add(device);
    if (e['mounted'] !== true) {
      const usage: DiskUsage = { device, mounted: false, size: null, used: null, avail: null };
      if (typeof e['mounted'] === 'string') usage.mountError = e['mounted'];
      return usage;
    }
    for (const key of ['size', 'used', 'avail']) {
      if (!isCount(e[key]))
        throw new ReconError(
          node,
          `device ${device}: '${key}' must be a byte count (got ${JSON.stringify(e[key]) ?? 'nothing'})`,
        );
    }
    return { device, mounted: true, size: e['size'] as number, used: e['used'] as number, avail: e['avail'] as number };
  });
}

function describeFailure(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (e as Error).message ?? String(e);
}

/**
 * `GET <baseUrl>/recon/<path>` (baseUrl like `http://10.0.0.1:6200`, path like `diskusage` or
 * `replication/object`), parsed as JSON. Anything but a 2xx answer with valid JSON within
 * `timeoutMs` is a `ReconError` naming the node; what the JSON must look like is the caller's.
 */
export async function fetchRecon(baseUrl: string, path: string, options: ReconOptions): Promise<unknown> {
  return (await reconGet(baseUrl, path, options)).body;
}

async function reconGet(
  baseUrl: string,
  path: string,
  options: ReconOptions,
): Promise<{ node: string; body: unknown }> {
  let node: string;
  let url: string;
  try {
    const parsed = new URL(baseUrl);
    node = parsed.host;
    url = `${baseUrl.replace(/\/+$/, '')}/recon/${path}`;
  } catch {
    throw new ReconError(baseUrl, 'not a valid URL');
  }
  const doFetch: Get = options.fetch ?? (url.startsWith('http:') ? httpGet : fetch);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs);
  const stop = () => controller.abort();
  options.signal?.addEventListener('abort', stop, { once: true });
  const failed = (what: string, e: unknown): ReconError => {
    if (e instanceof ReconError) return e;
    if (options.signal?.aborted) return new ReconError(node, 'stopped');
    return new ReconError(
      node,
      controller.signal.aborted
        ? `no complete answer within ${options.timeoutMs} ms`
        : `${what} (${describeFailure(e)})`,
    );
  };
  try {
    let response: GetResponse;
    try {
      response = await doFetch(url, { signal: controller.signal, headers: { accept: 'application/json' } });
    } catch (e) {
      throw failed('request failed', e);
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new ReconError(node, `HTTP ${response.status} from GET /recon/${path}`);
    }
    let text: string;
    try {
      text = await response.text();
    } catch (e) {
      throw failed('reading the response failed', e);
    }
    try {
      return { node, body: JSON.parse(text) as unknown };
    } catch {
      throw new ReconError(node, 'response is not valid JSON');
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', stop);
  }
}

/**
 * Each request in flight listens to the round's stop signal until it ends, so a round with more than
 * ten at once would make Node warn of a leak (MaxListenersExceededWarning) where there is none:
 * raise the signal's allowance to what the round runs at once, beside what its owner listens with.
 */
export function allowRequestsInFlight(signal: AbortSignal | undefined, inFlight: number): void {
  if (!signal) return;
  const max = getMaxListeners(signal);
  if (max !== 0 && max < inFlight + 10) setMaxListeners(inFlight + 10, signal);
}

/**
 * `GET <baseUrl>/recon/diskusage` (baseUrl like `http://10.0.0.1:6200`). Anything but a 2xx answer
 * with a well-formed list within `timeoutMs` is a `ReconError` naming the node.
 */
export async function fetchDiskUsage(baseUrl: string, options: ReconOptions): Promise<DiskUsage[]> {
  const { node, body } = await reconGet(baseUrl, 'diskusage', options);
  return parseDiskUsage(body, node);
}

/** `http://<ip>:<port>` of a storage node (IPv6 in brackets). */
export const reconBaseUrl = (node: ReconNode): string =>
  `http://${node.ip.includes(':') ? `[${node.ip}]` : node.ip}:${node.port}`;

/**
 * Disk usage of every node, at most `concurrency` requests at a time, in the order given. A node that
 * fails (unreachable, timeout, HTTP error, bad body) is `{ ok: false, error }`; this never rejects
 * because of one node. `onPolled` hears of each node answered or failed (progress for a person).
 * Once `signal` aborts, the nodes not yet answered fail with "stopped" at once.
 */
export async function pollNodes(
  nodes: readonly ReconNode[],
  options: PollOptions,
  onPolled?: (done: number, total: number) => void,
): Promise<NodeDiskUsage[]> {
  let done = 0;
  allowRequestsInFlight(options.signal, options.concurrency);
  return mapConcurrent(nodes, options.concurrency, async (node): Promise<NodeDiskUsage> => {
    try {
      if (options.signal?.aborted) throw new ReconError(`${node.ip}:${node.port}`, 'stopped');
      return { node, ok: true, devices: await fetchDiskUsage(reconBaseUrl(node), options) };
    } catch (e) {
      const error =
        e instanceof ReconError ? e : new ReconError(`${node.ip}:${node.port}`, (e as Error).message ?? String(e));
      return { node, ok: false, error };
    } finally {
      onPolled?.(++done, nodes.length);
    }
  });
}
