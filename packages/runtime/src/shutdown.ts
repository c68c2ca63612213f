export interface ShutdownLog {
  info: (obj: object, msg: string) => void;
}

/**
 * On SIGTERM or SIGINT: run `stop` once (stop accepting, finish in-flight requests, close pools),
 * exit 0 when it is done, 1 if it fails or takes longer than `graceMs`.
 */
export function exitOnSignals(stop: () => Promise<unknown>, log: ShutdownLog, graceMs = 10_000): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(1), graceMs).unref();
    stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}
