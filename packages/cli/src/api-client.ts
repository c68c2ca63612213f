import { errors } from '@cairn/domain';

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

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Exponential backoff with jitter: 0.5 s, 1 s, 2 s, ... capped at 10 s. */
export const backoff = (attempt: number): number => Math.min(10_000, 500 * 2 ** attempt) * (0.5 + Math.random() / 2);

export async function api(config: ApiTarget, method: string, path: string, body?: unknown, retries = 3): Promise<ApiAnswer> {
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await fetch(`${config.apiUrl}${path}`, {
        method,
        headers: {
          ...(config.apiKey ? { Authorization: `ApiKey ${config.apiKey}` } : {}),
          Accept: 'application/json',
          ...(body ? { 'Content-Type': 'application/json' } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(120_000),
      });
      const text = await res.text();
      let json: unknown = null;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {
        json = { error: text.slice(0, 200) };
      }
      if (res.status >= 500 && attempt < retries) {
        await sleep(backoff(attempt));
        continue;
      }
      return { status: res.status, json };
    } catch (e) {
      if (attempt >= retries) {
        throw errors.unavailable(`the management API at ${config.apiUrl} did not answer ${method} ${path.split('?')[0]}: ${e instanceof Error ? ((e.cause as Error | undefined)?.message ?? e.message) : String(e)}`);
      }
      await sleep(backoff(attempt));
    }
  }
}

export const apiError = (what: string, r: ApiAnswer): ApiError =>
  new ApiError(`${what}: the management API answered ${r.status}: ${(r.json as { error?: string } | null)?.error ?? 'no details'}`, r.status);
