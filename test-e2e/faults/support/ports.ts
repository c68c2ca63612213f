/**
 * The fault tests run two files at a time, one per jest worker, and each worker has servers of its
 * own: a file that restarts, stops or freezes its Postgres or Redis never touches the other file's.
 * Worker n listens on the base ports plus 10·(n − 1) and uses the Postgres cluster `cairnfaults`
 * (worker 1) or `cairnfaults<n>`. A worker runs one file at a time, so within it the fixed ports
 * are free again when the next file starts.
 */
const WORKER = Number(process.env.JEST_WORKER_ID ?? 1);

/** `base` (or the environment's override of it) for this worker. */
export const workerPort = (override: string | undefined, base: number): number =>
  Number(override ?? base) + 10 * (WORKER - 1);

export const FAULTS_CLUSTER = WORKER === 1 ? 'cairnfaults' : `cairnfaults${WORKER}`;
