import { setTimeout as delay } from 'node:timers/promises';

/**
 * For commands that repeat on a schedule (`--interval`): the first SIGTERM or SIGINT aborts the
 * returned signal, which the running round hears at its next batch, so that a service manager's
 * stop takes seconds rather than a whole round. A second signal finds no handler left and ends
 * the process at once, as usual.
 */
export interface StopSignal {
  signal: AbortSignal;
  /** Waits `ms`, or less when a stop is requested meanwhile. */
  wait(ms: number): Promise<void>;
}

export function stopOnSignals(): StopSignal {
  const controller = new AbortController();
  const stop = () => {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    controller.abort();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  const { signal } = controller;
  return { signal, wait: (ms) => delay(ms, undefined, { signal }).catch(() => undefined) };
}
