import type { ClusterHealthStatus } from '@cairn/contract';
import type { Plan, PlanDevice, PlanStep, RingDeviceJson } from '@cairn/rings/plan-types';

/**
 * The console's only way out: fetch against the public /api/v1/ of the server that served it.
 * Requests are authenticated by the session cookie (HttpOnly: this code never sees it); the API
 * key is sent once, to open the session, in the Authorization header, and is not kept.
 */

/** The CSRF header every write must carry, with the token the session answer gave. */
export const CSRF_HEADER = 'X-Cairn-CSRF';

/** The `code` of the API's refusal when this session must confirm an action with the API key again. */
export const STEP_UP_REQUIRED = 'step_up_required';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The API's stable code for a refusal the console acts on (STEP_UP_REQUIRED), if any. */
    readonly code?: string,
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

/** A bigint of the API: a JSON number up to 2^53, a decimal string above (where a number would lose digits). */
export type BigCount = number | string;

/** Per storage policy, by the policy's name as the cluster spells it. */
export type PolicyQuotas = Record<string, BigCount>;

export interface Cluster {
  auth_url: string;
  /** The worst severity of its open health findings, `unknown` before its first health round. */
  health?: ClusterHealthStatus;
  id: number;
  name: string;
  /** The sum of its users' byte quotas; null when none has one (absent from an older API). */
  quota_bytes_total?: BigCount | null;
  /** The sum of its users' per-policy byte quotas, by policy name; null when none has one. */
  quota_bytes_policy_total?: PolicyQuotas | null;
  /** What the quota reconciler last read from its Swift's /info; null before it has. */
  quota_support?: { fields: QuotaField[]; read_at: string; swift_version: string | null } | null;
  region: string;
  resource_uri: string;
  storage_url: string;
  uuid: string;
}

/** The quotas of a user the API takes; null is no quota. */
export type QuotaField = 'quota_bytes' | 'quota_count' | 'quota_bytes_policy' | 'quota_count_policy';

export interface StorageUser {
  /** The account's bytes at the latest storage sample; null before the first. */
  bytes_used?: BigCount | null;
  cluster: string;
  enabled: boolean;
  id: string;
  is_superuser: boolean;
  object_count?: BigCount | null;
  password?: string;
  quota_applied_at?: string | null;
  quota_bytes?: BigCount | null;
  quota_bytes_policy?: PolicyQuotas | null;
  quota_count?: BigCount | null;
  quota_count_policy?: PolicyQuotas | null;
  quota_error?: string | null;
  /** null: the user never had a quota. */
  quota_status?: 'applied' | 'pending' | 'error' | null;
  resource_uri: string;
  usage_sampled_at?: string | null;
  user: string;
}

/** GET clusters/<id>/utilization/policies/: the cluster's storage policies. */
export interface StoragePolicy {
  default: boolean;
  index: number;
  name: string;
}

/** An S3 access key of a storage user; `secret` only in the answer that created it. */
export interface S3Credential {
  access_key: string;
  /** The application credential whose token made it through the gateway (its roles, its lifetime), or null. */
  application_credential: string | null;
  cluster: string;
  created_at: string;
  /** When it stops signing, ISO 8601 UTC; null: never. */
  expires_at: string | null;
  id: string;
  resource_uri: string;
  secret?: string;
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

/**
 * A ring plan's devices and steps are @cairn/rings' (docs/rings.md, "The plan"); the API keeps the
 * plan as the ring host computed it. Plans computed before a device's size was kept lack size_bytes.
 */
export type RingPlanDevice = Omit<PlanDevice, 'size_bytes'> & Partial<Pick<PlanDevice, 'size_bytes'>>;
export type RingPlanStep = PlanStep;

/** A device of a stored ring (GET clusters/<id>/rings/: the current version's `devices`). */
export type RingDevice = RingDeviceJson;

/** GET clusters/<id>/rings/: a version of one of the cluster's rings, as far as the console reads it. */
export interface RingVersion {
  id: string;
  ring: string;
  version: number;
  current: boolean;
  part_power: number;
  replicas: number;
  /** The current version's devices; null for the others. */
  devices: RingDevice[] | null;
}

/** GET clusters/<id>/ring_plans/: a plan computed on the ring host by `cairn rings plan --cluster`. */
export interface RingPlan {
  id: string;
  name: string | null;
  ring: string;
  seed: number;
  swift_version: string;
  computed_at: string | null;
  parts_total: number;
  parts_moved: number;
  parts_moved_pct: number;
  replicas_moved: number;
  bytes_to_move: number | null;
  device_count: number;
  steps_computed: number;
  steps_estimated: number;
  created_at: string;
  created_by: string;
  resource_uri: string;
  plan: Pick<
    Plan,
    'replicas' | 'balance' | 'balance_before' | 'min_part_hours' | 'max_move_pct' | 'notes' | 'steps'
  > & {
    devices: RingPlanDevice[];
  };
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

const UNREACHABLE = 'The management API could not be reached. Check the network and try again.';

/** The API's own sentence for a refusal, else its status line. */
async function refusal(res: Response): Promise<ApiError> {
  const text = await res.text();
  let message = `The management API answered ${res.status} ${res.statusText}.`;
  let code: string | undefined;
  try {
    const o = (text ? JSON.parse(text) : {}) as { code?: string; error?: string; error_message?: string };
    message = o.error ?? o.error_message ?? message;
    code = o.code;
  } catch {
    // An answer that is not JSON (a proxy's error page): keep the status line.
  }
  return new ApiError(res.status, message, code);
}

/** One request with the session cookie; `headers` add to the defaults (the CSRF token, a key). */
export async function request(
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; accept?: string } = {},
): Promise<Response> {
  try {
    return await fetch(path.startsWith('/') ? path : `${API}/${path}`, {
      method,
      headers: {
        Accept: options.accept ?? 'application/json',
        ...(options.body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...options.headers,
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, UNREACHABLE);
  }
}

/** The JSON of an answer, or the API's refusal thrown as an ApiError. */
export async function jsonOf<T>(res: Response): Promise<T> {
  if (!res.ok) throw await refusal(res);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : null) as T;
}

/**
 * A caller bound to the signed-in session: writes carry its CSRF token; `onUnauthorized` runs when
 * the session has ended (signed out elsewhere, idle, too old, or its key revoked). A write the API
 * will do only once the operator has typed the key again (minting an API key or an operator, a
 * wider operator) asks `confirmKey`, then is sent once more; declined, nothing is done.
 */
export function client(csrfToken: string, onUnauthorized: () => void, confirmKey: () => Promise<boolean>): Call {
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const send = async () => {
      const res = await request(method, path, { body, headers: method === 'GET' ? {} : { [CSRF_HEADER]: csrfToken } });
      if (res.status === 401) onUnauthorized();
      return res;
    };
    let res = await send();
    if (res.status === 403 && method !== 'GET') {
      const refused = await refusal(res);
      if (refused.code !== STEP_UP_REQUIRED) throw refused;
      if (!(await confirmKey())) throw new ApiError(403, 'Cancelled: nothing was changed.', refused.code);
      res = await send();
    }
    return jsonOf<T>(res);
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

/** Fetches a CSV export (with the session cookie) and hands it to the browser as a download. */
export async function downloadCsv(path: string, filename: string): Promise<void> {
  const res = await request('GET', path, { accept: 'text/csv' });
  if (!res.ok) throw await refusal(res);
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
