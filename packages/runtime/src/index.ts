export { exitOnSignals, type ShutdownLog } from './shutdown';
export { CONNECTION_CODES, isConnectionCode, isDatabaseUnreachable } from './connection-errors';
export { closeGracefully } from './graceful-close';
export { LogCapture } from './log-capture';
export { censorSecrets, CENSORED, CREDENTIAL_HEADERS, type Secrets } from './secret-censor';
export { listen, type Listening, type ListenOptions } from './listen';
export { jsonErrorBody, type ErrorBodyFormat } from './client-errors';
export {
  requestLogging,
  requestLogger,
  requestIdOf,
  type RequestIdOptions,
  type RequestLogOptions,
} from './request-logging';
export {
  createRegistry,
  metricsEndpoint,
  CounterFamily,
  HttpMetrics,
  LATENCY_BUCKETS,
  UNMATCHED_ROUTE,
  knexPool,
  registerPoolMetrics,
  type CounterChild,
  type PoolLike,
} from './metrics';
export {
  checkReadiness,
  NotReady,
  ReadyAs,
  readinessEndpoint,
  registerReadinessMetrics,
  READINESS_TIMEOUT_MS,
  type ReadinessCheck,
  type ReadinessReport,
} from './readiness';
export { retryStartup, scrubSecrets, type RetryOptions, type StartupLog } from './startup';
export { logDestination, logFormatConfig, logsAreJson, type LogFormat } from './log-format';
export { isTlsFailure, postgresUrlWithCa, readCaFile, TlsFailure } from './tls';
export {
  BodyRefused,
  DRAIN_LIMIT_BYTES,
  formatLimit,
  LINGER_MS,
  lingerOverUnreadBodies,
  readBody,
  type BodyRefusal,
} from './bodies';
export { CAIRN_VERSION } from './version';
