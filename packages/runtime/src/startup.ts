import pRetry from 'p-retry';

export interface StartupLog {
  warn: (obj: object, msg: string) => void;
}

export interface RetryOptions {
  /** Give up (rethrow the last error) once this much time has passed since the first attempt; 0: no retry. */
  deadlineMs: number;
  log: StartupLog;
  /** Errors worth no retry (bad configuration): rethrown at once. */
  isFatal?: (err: unknown) => boolean;
  firstDelayMs?: number;
  maxDelayMs?: number;
}

/** Connection URLs in messages lose their credentials: `postgres://user:pw@host` → `postgres://[redacted]@host`. */
export function scrubSecrets(message: string): string {
  return message.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi, '$1[redacted]@');
}

/**
 * Runs `attempt` until it succeeds (p-retry), waiting between tries with a doubling delay capped
 * at `maxDelayMs`; a failure once `deadlineMs` has passed is the last (so the last try may start
 * up to one delay after the deadline). In compose or Kubernetes the database and Redis often
 * start after the services (and the migrate job creates the tables and the cluster row later
 * still); exiting at once would only have the orchestrator restart us in a tighter loop.
 * Each failure is logged as a warning with the error's message and code, never a URL's secrets.
 */
/** Carries an attempt's error through p-retry, which would not retry a TypeError of a driver's. */
class AttemptFailed extends Error {
  constructor(readonly original: unknown) {
    super('attempt failed');
  }
}

export async function retryStartup<T>(what: string, attempt: () => Promise<T>, options: RetryOptions): Promise<T> {
  const { deadlineMs, log, isFatal = () => false, firstDelayMs = 250, maxDelayMs = 5_000 } = options;
  const giveUpAt = Date.now() + deadlineMs;
  return pRetry(
    async () => {
      try {
        return await attempt();
      } catch (e) {
        throw new AttemptFailed(e);
      }
    },
    {
      forever: true,
      factor: 2,
      minTimeout: firstDelayMs,
      maxTimeout: maxDelayMs,
      randomize: false,
      // Decides and logs; throwing here ends the retries with that error.
      onFailedAttempt: (failure) => {
        const e = (failure as unknown as AttemptFailed).original;
        const n = failure.attemptNumber;
        const err = e as { message?: unknown; code?: unknown };
        const summary = {
          message: scrubSecrets(String(err.message ?? e)),
          ...(typeof err.code === 'string' ? { code: err.code } : {}),
        };
        if (isFatal(e) || Date.now() >= giveUpAt) {
          if (n > 1) log.warn({ step: what, attempts: n, err: summary }, `${what}: giving up`);
          throw e;
        }
        // The wait p-retry is about to make (its `retry` timeouts: first * 2^(n-1), capped).
        const wait = Math.min(firstDelayMs * 2 ** (n - 1), maxDelayMs);
        log.warn({ step: what, attempt: n, retryInMs: wait, err: summary }, `${what}: not available yet, retrying`);
      },
    },
  );
}
