/**
 * Every request of the fault tests goes through here and is recorded: when it started and ended,
 * what came back, and whether that was the success the operation expects.
 */
export type ServiceName = 'api' | 'gateway';

/** A client gives up after 6 s; an answer slower than 5 s already counts as a hang. */
export const CLIENT_TIMEOUT_MS = 6_000;
export const MAX_ANSWER_MS = 5_000;

export interface Outcome {
  service: ServiceName;
  op: string;
  start: number;
  end: number;
  /** HTTP status, or 0 when no answer came (timeout, connection refused or reset). */
  status: number;
  /** The answer was the operation's success status. */
  ok: boolean;
  body: string;
  headers: Headers | null;
  error?: string;
}

export class Recorder {
  readonly outcomes: Outcome[] = [];

  async call(service: ServiceName, op: string, url: string, init: RequestInit, okStatuses: number[]): Promise<Outcome> {
    const start = Date.now();
    let outcome: Outcome;
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) });
      const body = await res.text();
      outcome = {
        service,
        op,
        start,
        end: Date.now(),
        status: res.status,
        ok: okStatuses.includes(res.status),
        body,
        headers: res.headers,
      };
    } catch (e) {
      const err = e as Error & { cause?: { code?: string } };
      outcome = {
        service,
        op,
        start,
        end: Date.now(),
        status: 0,
        ok: false,
        body: '',
        headers: null,
        error: `${err.name}: ${err.message} ${err.cause?.code ?? ''}`,
      };
    }
    this.outcomes.push(outcome);
    return outcome;
  }

  /** Outcomes of one service that started within [from, to). */
  between(service: ServiceName, from: number, to = Infinity): Outcome[] {
    return this.outcomes.filter((o) => o.service === service && o.start >= from && o.start < to);
  }
}

/**
 * Whether a failed answer is the one allowed during an outage: 503 with a clear error. The
 * management API answers `{"error": "..."}`; the gateway Keystone's `{"error": {code, message}}`
 * (V1 and V2 clients only look at the status, but they get the same body).
 */
export function isClearUnavailable(o: Outcome): boolean {
  if (o.status !== 503) return false;
  try {
    const body = JSON.parse(o.body) as { error?: unknown };
    if (o.service === 'api') return typeof body.error === 'string' && body.error.length > 0;
    const e = body.error as { code?: unknown; message?: unknown } | undefined;
    return e?.code === 503 && typeof e.message === 'string' && e.message.length > 0;
  } catch {
    return false;
  }
}

export const show = (o: Outcome): string =>
  `${o.service} ${o.op} -> ${o.status || o.error} after ${o.end - o.start} ms: ${o.body.slice(0, 200)}`;
