import {
  CounterFamily,
  createRegistry,
  HttpMetrics,
  knexPool,
  registerPoolMetrics,
  type CounterChild,
} from '@cairn/runtime';
import type { Knex } from 'knex';
import { Gauge, Histogram, type Registry } from 'prom-client';

export type AuthVersion = 'v1' | 'v2' | 'v3';
const VERSIONS: readonly AuthVersion[] = ['v1', 'v2', 'v3'];
/** Only Keystone has a validation call (Swift V1 tokens are validated through V2/V3 too). */
export type KeystoneVersion = 'v2' | 'v3';
const KEYSTONE_VERSIONS: readonly KeystoneVersion[] = ['v2', 'v3'];

/** Why a login got no token. */
export type RefusalReason =
  /** Unknown user, disabled user or wrong password (indistinguishable on purpose). */
  | 'invalid_credentials'
  /** Past the failed-login limit (per user or per address). */
  | 'rate_limited'
  /** The request itself is malformed (missing fields, bad JSON). */
  | 'malformed'
  /** The project/account asked for is not a valid name, or the scope (domain, system) grants nothing. */
  | 'scope_refused';
const REASONS: readonly RefusalReason[] = ['invalid_credentials', 'rate_limited', 'malformed', 'scope_refused'];

/** How a validation call (a Swift proxy checking a user's token) ended. */
export type ValidationResult =
  | 'valid'
  /** The subject token is unknown, expired or revoked (404). */
  | 'not_found'
  /** The caller's own token is bad (401). */
  | 'caller_unauthorized'
  /** The caller may not see that token (403). */
  | 'forbidden';
const RESULTS: readonly ValidationResult[] = ['valid', 'not_found', 'caller_unauthorized', 'forbidden'];

/** How an s3tokens call (a Swift proxy's s3token checking an S3 request's signature) ended. */
export type S3TokensResult =
  | 'valid'
  /** No credential of this cluster has the access key. */
  | 'unknown_access_key'
  /** The credential exists; the signature is not its secret's. */
  | 'signature_mismatch'
  /** The signature is right but its user is disabled. */
  | 'user_disabled'
  /** The signature is right but the credential's expires_at has passed. */
  | 'credential_expired'
  /** The signature is right but the application credential the key is bound to is gone or expired. */
  | 'application_credential_void'
  /** The stored secret does not open under CAIRN_S3_SECRET_KEYS (its key id is missing, or it was altered). */
  | 'secret_unusable'
  /** The body is not an s3tokens request (400). */
  | 'malformed'
  /** The caller sent no valid service token (401) or one without the admin role (403). */
  | 'service_unauthorized'
  | 'service_forbidden';
const S3_RESULTS: readonly S3TokensResult[] = [
  'valid',
  'unknown_access_key',
  'signature_mismatch',
  'user_disabled',
  'credential_expired',
  'application_credential_void',
  'secret_unusable',
  'malformed',
  'service_unauthorized',
  'service_forbidden',
];

/** Only `.status` is read: works for ioredis' Redis and Cluster alike. */
export interface RedisStatus {
  status: string;
}

/**
 * The gateway's metrics, one registry per app: HTTP requests by route template, tokens issued,
 * refused and validated by API version, the password KDF's time, the database pool and the Redis
 * connection. Token counters are pre-bound per label set: an increment on the hot path is one addition.
 */
export class GatewayMetrics {
  readonly registry: Registry;
  readonly http: HttpMetrics;
  private readonly issuedBy: Record<AuthVersion, CounterChild>;
  private readonly refusedBy: Record<AuthVersion, Record<RefusalReason, CounterChild>>;
  private readonly validatedBy: Record<KeystoneVersion, Record<ValidationResult, CounterChild>>;
  private readonly kdf: Histogram;
  private readonly s3By: Record<S3TokensResult, CounterChild>;
  private readonly s3OverLimit: CounterChild;

  constructor(sources: { db: Knex; redis?: RedisStatus }) {
    this.registry = createRegistry('auth-gateway');
    this.http = new HttpMetrics(this.registry);
    const issued = new CounterFamily<'version'>(
      'cairn_tokens_issued_total',
      'Tokens issued, by auth API version (v1: Swift, v2: Keystone V2.0, v3: Keystone V3).',
      this.registry,
    );
    const refused = new CounterFamily<'version' | 'reason'>(
      'cairn_tokens_refused_total',
      'Logins refused, by auth API version and reason.',
      this.registry,
    );
    const validated = new CounterFamily<'version' | 'result'>(
      'cairn_token_validations_total',
      'Token validation calls (a Swift proxy or a user checking a token), by auth API version and result.',
      this.registry,
    );
    const each = <K extends string, V>(keys: readonly K[], f: (k: K) => V) =>
      Object.fromEntries(keys.map((k) => [k, f(k)])) as Record<K, V>;
    this.issuedBy = each(VERSIONS, (version) => issued.labels({ version }));
    this.refusedBy = each(VERSIONS, (version) => each(REASONS, (reason) => refused.labels({ version, reason })));
    this.validatedBy = each(KEYSTONE_VERSIONS, (version) =>
      each(RESULTS, (result) => validated.labels({ version, result })),
    );
    const s3 = new CounterFamily<'result'>(
      'cairn_s3tokens_total',
      "s3tokens calls (a Swift proxy checking an S3 request's signature), by result; clients see 200, 400 or one 401 for every refusal.",
      this.registry,
    );
    this.s3By = each(S3_RESULTS, (result) => s3.labels({ result }));
    this.s3OverLimit = new CounterFamily<'limit'>(
      'cairn_s3_signature_failures_over_limit_total',
      "Failed S3 signature checks past CAIRN_LOGIN_USER_FAILURE_LIMIT for their access key's owner within its window (counted, logged, never a lockout: see SECURITY.md).",
      this.registry,
    ).labels({ limit: 'user' });
    this.kdf = new Histogram({
      name: 'cairn_password_kdf_seconds',
      help: 'Time of one password KDF run (scrypt), cache hits excluded; its queue shows here when logins outpace the CPU.',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [this.registry],
    });
    registerPoolMetrics(this.registry, () => knexPool(sources.db));
    if (sources.redis) this.registerRedisGauge(sources.redis);
  }

  /** The lag gauges of a gateway reading a hot standby (absent on the primary). */
  watchStandby(standby: { readonly lagMs: number; readonly stale: boolean }): void {
    new Gauge({
      name: 'cairn_standby_lag_seconds',
      help: "How far behind the primary the hot standby this gateway reads may be: the age of the primary's heartbeat there (rises while replay stops or the standby cannot be read; +Inf before the first read).",
      registers: [this.registry],
      collect() {
        this.set(standby.lagMs / 1000);
      },
    });
    new Gauge({
      name: 'cairn_standby_stale',
      help: 'Whether that lag is past CAIRN_STANDBY_MAX_LAG (1) or not (0); what the gateway then does is CAIRN_STANDBY_STALE.',
      registers: [this.registry],
      collect() {
        this.set(standby.stale ? 1 : 0);
      },
    });
  }

  private registerRedisGauge(redis: RedisStatus): void {
    new Gauge({
      name: 'cairn_redis_connected',
      help: "Whether the token store's Redis connection is ready (1) or not (0); absent without REDIS_URL.",
      registers: [this.registry],
      collect() {
        this.set(redis.status === 'ready' ? 1 : 0);
      },
    });
  }

  issued(version: AuthVersion): void {
    this.issuedBy[version].inc();
  }
  refused(version: AuthVersion, reason: RefusalReason): void {
    this.refusedBy[version][reason].inc();
  }
  validated(version: KeystoneVersion, result: ValidationResult): void {
    this.validatedBy[version][result].inc();
  }
  s3tokens(result: S3TokensResult): void {
    this.s3By[result].inc();
  }
  s3FailureOverLimit(): void {
    this.s3OverLimit.inc();
  }
  /** Seconds one KDF run took (the verifier calls this around scrypt only). */
  observeKdf = (seconds: number): void => {
    this.kdf.observe(seconds);
  };
}
