/**
 * The console's only way out: fetch against the public /api/v1/ of the server that served it.
 * The API key travels in the Authorization header, never in a URL (so never in a log or history).
 */

export interface Credentials {
  operator: string;
  key: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface ListMeta {
  limit: number;
  next: string | null;
  offset: number | string;
  previous: string | null;
  total_count: number;
}

export interface List<T> {
  meta: ListMeta;
  objects: T[];
}

export interface Cluster {
  auth_url: string;
  id: number;
  name: string;
  region: string;
  resource_uri: string;
  storage_url: string;
  uuid: string;
}

export interface StorageUser {
  cluster: string;
  enabled: boolean;
  id: string;
  is_superuser: boolean;
  password?: string;
  resource_uri: string;
  user: string;
}

export interface Operator {
  clusters: string[];
  id: number;
  name: string;
  resource_uri: string;
  role: 'admin' | 'reader';
}

/** GET whoami/: the signed-in operator, and which of its keys the console runs on. */
export interface Me extends Operator {
  /** The resource of the key in use (absent from an API that predates it). */
  key_uri?: string;
}

export interface ApiKey {
  created_at: string;
  id: string | number;
  key?: string;
  operator: string;
  resource_uri: string;
}

/** GET clusters/<id>/capacity/history/: per ring set, capacity/list/'s numbers over time. */
export interface CapacitySample {
  time: string;
  total_raw_tb: number;
  total_used_tb: number;
  total_free_tb: number;
  total_used_pct: number | null;
}
export interface CapacityHistory {
  meta: { start: string; end: string; resolution: 'hour' | 'day' };
  history: Array<{ ring_set: string; samples: CapacitySample[] }>;
}

export interface CapacityElement {
  ring_set: string;
  total_raw_tb: number;
  total_used_tb: number;
  total_free_tb: number;
  total_used_pct: number;
  pct_used_stats: { avg: number; count: number; max: number; min: number; pct_95: number; stddev: number };
}

export interface Device {
  avail_bytes: number | null;
  device: string;
  mounted: boolean;
  node: string;
  policies: string[];
  reported_at: string;
  size_bytes: number | null;
  used_bytes: number | null;
}

export interface AuditEntry {
  action: string;
  after: unknown;
  before: unknown;
  id: string;
  operator: string;
  operator_id: number | null;
  request_id: string | null;
  resource_uri: string;
  target_id: string;
  target_name: string;
  target_type: string;
  target_uri: string;
  time: string;
}

export const API = '/api/v1';

/** Query string from pairs, skipping empty values. */
export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const clusterIdOf = (uri: string): number => Number(/\/clusters\/(\d+)\/?$/.exec(uri)?.[1] ?? NaN);

export type Call = <T>(method: string, path: string, body?: unknown) => Promise<T>;

/** A caller bound to one operator's credentials; `onUnauthorized` runs when the key stops working. */
export function client(creds: Credentials, onUnauthorized: () => void): Call {
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    let res: Response;
    try {
      res = await fetch(path.startsWith('/') ? path : `${API}/${path}`, {
        method,
        headers: {
          Accept: 'application/json',
          Authorization: `ApiKey ${creds.operator}:${creds.key}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'omit',
        cache: 'no-store',
      });
    } catch {
      throw new ApiError(0, 'The management API could not be reached. Check the network and try again.');
    }
    if (res.status === 401) onUnauthorized();
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      // An answer that is not JSON (a proxy's error page) is reported by status below.
    }
    if (!res.ok) {
      const o = (json ?? {}) as { error?: string; error_message?: string };
      throw new ApiError(res.status, o.error ?? o.error_message ?? `The management API answered ${res.status} ${res.statusText}.`);
    }
    return json as T;
  };
}

/** Every page of a list, following `next` (for device lists, bounded by `max` rows). */
export async function listAll<T>(call: Call, path: string, max = 100_000): Promise<{ rows: T[]; total: number }> {
  const rows: T[] = [];
  let next: string | null = path;
  let total = 0;
  while (next !== null && rows.length < max) {
    const page: List<T> = await call<List<T>>('GET', next);
    rows.push(...page.objects);
    total = page.meta.total_count;
    next = page.meta.next;
  }
  return { rows, total };
}

export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * Fetches a CSV export with the operator's key (a plain link could not send it) and hands it to
 * the browser as a download.
 */
export async function downloadCsv(creds: Credentials, path: string, filename: string): Promise<void> {
  let res: Response;
  try {
    res = await fetch(`${API}/${path}`, { headers: { Accept: 'text/csv', Authorization: `ApiKey ${creds.operator}:${creds.key}` }, credentials: 'omit', cache: 'no-store' });
  } catch {
    throw new ApiError(0, 'The management API could not be reached. Check the network and try again.');
  }
  if (!res.ok) {
    const text = await res.text();
    let message = `The management API answered ${res.status} ${res.statusText}.`;
    try {
      message = (JSON.parse(text) as { error?: string }).error ?? message;
    } catch {
      // Not JSON: keep the status line.
    }
    throw new ApiError(res.status, message);
  }
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
