import pRetry from 'p-retry';
import { errors } from '@cairn/domain/errors';

/** Where the management API is and the "<operator>:<key>" to call it with. */
export interface ApiTarget {
  apiUrl: string;
  apiKey?: string;
}

/** The management API as `cairn` uses it: JSON, retried on 5xx and network errors (`retries`). */
export interface ApiAnswer {
  status: number;
  json: unknown;
}

/** A management API answer that is not a success; its status decides `cairn`'s exit code. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/**
 * p-retry's waits between tries: 0.25-0.5 s, 0.5-1 s, 1-2 s, ... (doubling, with jitter so that
 * many clients do not retry in step), capped at 10 s. Shared by every retried call of `cairn`.
 */
export const BACKOFF = { factor: 2, minTimeout: 250, maxTimeout: 10_000, randomize: true } as const;

/** A 5xx answer, thrown so that p-retry tries again; the last one is returned as the answer. */
class ServerFailed extends Error {
  constructor(readonly answer: ApiAnswer) {
    super(`HTTP ${answer.status}`);
  }
}

/**
 * fetch rejects with a TypeError ("fetch failed", the cause says why), which p-retry takes for a
 * programming mistake and does not retry: it is rethrown as a plain Error, its cause kept.
 */
export const unreachable = (e: unknown): Error =>
  new Error(e instanceof Error ? ((e.cause as Error | undefined)?.message ?? e.message) : String(e), { cause: e });

export async function api(
  config: ApiTarget,
  method: string,
  path: string,
  body?: unknown,
  retries = 3,
): Promise<ApiAnswer> {
  const attempt = async (): Promise<ApiAnswer> => {
    let res: Response;
    let text: string;
    try {
      res = await fetch(`${config.apiUrl}${path}`, {
        method,
        headers: {
          ...(config.apiKey ? { Authorization: `ApiKey ${config.apiKey}` } : {}),
          Accept: 'application/json',
          ...(body ? { 'Content-Type': 'application/json' } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(120_000),
      });
      text = await res.text();
    } catch (e) {
      throw unreachable(e);
    }
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = { error: text.slice(0, 200) };
    }
    if (res.status >= 500) throw new ServerFailed({ status: res.status, json });
    return { status: res.status, json };
  };
  try {
    return await pRetry(attempt, { ...BACKOFF, retries });
  } catch (e) {
    // Still 5xx after the retries: the caller turns the answer into its error (and exit code).
    if (e instanceof ServerFailed) return e.answer;
    throw errors.unavailable(
      `the management API at ${config.apiUrl} did not answer ${method} ${path.split('?')[0]}: ${(e as Error).message}`,
    );
  }
}

export const apiError = (what: string, r: ApiAnswer): ApiError =>
  new ApiError(
    `${what}: the management API answered ${r.status}: ${(r.json as { error?: string } | null)?.error ?? 'no details'}`,
    r.status,
  );

/** An answer whose body is kept as bytes (a ring file), with the headers a caller reads. */
export interface BinaryAnswer {
  status: number;
  headers: Headers;
  bytes: Buffer;
}

/**
 * A call whose request or answer body is a file, not JSON: retried like `api` on 5xx and network
 * errors (`retries`); `headers` are sent as given.
 */
export async function apiBinary(
  config: ApiTarget,
  method: string,
  path: string,
  options: { body?: Buffer; headers?: Record<string, string>; signal?: AbortSignal } = {},
  retries = 3,
): Promise<BinaryAnswer> {
  const attempt = async (): Promise<BinaryAnswer> => {
    let answer: BinaryAnswer;
    try {
      const res = await fetch(`${config.apiUrl}${path}`, {
        method,
        headers: {
          ...(config.apiKey ? { Authorization: `ApiKey ${config.apiKey}` } : {}),
          Accept: 'application/octet-stream, application/json',
          ...(options.body ? { 'Content-Type': 'application/octet-stream' } : {}),
          ...options.headers,
        },
        body: options.body,
        signal: options.signal
          ? AbortSignal.any([options.signal, AbortSignal.timeout(120_000)])
          : AbortSignal.timeout(120_000),
      });
      answer = { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
    } catch (e) {
      throw unreachable(e);
    }
    if (answer.status >= 500) throw new ServerFailed({ status: answer.status, json: jsonOf(answer.bytes) });
    return answer;
  };
  try {
    return await pRetry(attempt, { ...BACKOFF, retries });
  } catch (e) {
    if (e instanceof ServerFailed)
      return { status: e.answer.status, headers: new Headers(), bytes: Buffer.from(JSON.stringify(e.answer.json)) };
    throw errors.unavailable(
      `the management API at ${config.apiUrl} did not answer ${method} ${path.split('?')[0]}: ${(e as Error).message}`,
    );
  }
}

/** An error answer's JSON (`{"error": …}`), or its first characters. */
export function jsonOf(bytes: Buffer): unknown {
  const text = bytes.toString('utf8');
  try {
    return text ? (JSON.parse(text) as unknown) : null;
  } catch {
    return { error: text.slice(0, 200) };
  }
}
