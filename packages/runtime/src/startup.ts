import { setTimeout as sleep } from 'node:timers/promises';

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
 * Runs `attempt` until it succeeds, waiting between tries with a doubling delay capped at
 * `maxDelayMs`, for at most `deadlineMs`. In compose or Kubernetes the database and Redis often
 * start after the services (and the migrate job creates the tables and the cluster row later
 * still); exiting at once would only have the orchestrator restart us in a tighter loop.
 * Each failure is logged as a warning with the error's message and code, never a URL's secrets.
 */
export async function retryStartup<T>(what: string, attempt: () => Promise<T>, options: RetryOptions): Promise<T> {
  const { deadlineMs, log, isFatal = () => false, firstDelayMs = 250, maxDelayMs = 5_000 } = options;
  const giveUpAt = Date.now() + deadlineMs;
  let delay = firstDelayMs;
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (e) {
      const left = giveUpAt - Date.now();
      const err = e as { message?: unknown; code?: unknown };
      const summary = { message: scrubSecrets(String(err.message ?? e)), ...(typeof err.code === 'string' ? { code: err.code } : {}) };
      if (isFatal(e) || left <= 0) {
        if (n > 1) log.warn({ step: what, attempts: n, err: summary }, `${what}: giving up`);
        throw e;
      }
      const wait = Math.min(delay, left);
      log.warn({ step: what, attempt: n, retryInMs: wait, err: summary }, `${what}: not available yet, retrying`);
      await sleep(wait);
      delay = Math.min(delay * 2, maxDelayMs);
    }
  }
}
