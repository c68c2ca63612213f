import { ConfigError } from '@cairn/config';
import { parseS3SecretKeys, type S3SecretKeyring } from '@cairn/domain';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config';
import type { GatewayMetrics } from '../http/metrics';
import type { TokenStore } from '../tokens/store';
import { Ec2ChangeLimiter } from './ec2-change-limit';
import { S3CredentialDirectory } from './s3-credentials';
import { S3SignatureChecker } from './s3-signatures';

/** What the S3 routes need. */
export interface S3Deps {
  credentials: S3CredentialDirectory;
  checker: S3SignatureChecker;
  /** Absent without CAIRN_S3_SECRET_KEYS: nothing can be checked or created. */
  keyring?: S3SecretKeyring;
  /** CAIRN_S3TOKENS_REQUIRE_SERVICE_TOKEN. */
  requireServiceToken: boolean;
  /** CAIRN_EC2_CHANGE_LIMIT / _WINDOW: how often a user may create or delete its credentials. */
  changes: Ec2ChangeLimiter;
}

/** The keyring from CAIRN_S3_SECRET_KEYS / CAIRN_S3_CURRENT_KEY_ID; a ConfigError listing what is wrong. */
export function s3Keyring(config: Pick<GatewayConfig, 's3SecretKeys' | 's3CurrentKeyId'>): S3SecretKeyring | undefined {
  if (config.s3SecretKeys === undefined) return undefined;
  const parsed = parseS3SecretKeys(config.s3SecretKeys, config.s3CurrentKeyId);
  if (!parsed.ok) throw new ConfigError(parsed.problems);
  return parsed.keyring;
}

export function createS3Deps(
  config: Pick<
    GatewayConfig,
    | 's3SecretKeys'
    | 's3CurrentKeyId'
    | 's3tokensRequireServiceToken'
    | 'userCacheMs'
    | 'userFailureLimit'
    | 'userFailureWindow'
    | 'ec2ChangeLimit'
    | 'ec2ChangeWindow'
  >,
  parts: { db: Knex; clusterId: number; store: TokenStore; log: Logger; metrics: GatewayMetrics },
): S3Deps {
  const keyring = s3Keyring(config);
  if (!keyring)
    parts.log.warn(
      'CAIRN_S3_SECRET_KEYS is not set: S3 signatures cannot be checked and OS-EC2 credentials cannot be created here',
    );
  const credentials = new S3CredentialDirectory(parts.db, parts.clusterId, config.userCacheMs);
  const checker = new S3SignatureChecker(
    credentials,
    keyring,
    parts.store,
    { limit: config.userFailureLimit, windowMs: config.userFailureWindow * 1000 },
    parts.log,
    () => parts.metrics.s3FailureOverLimit(),
  );
  const changes = new Ec2ChangeLimiter(parts.store, {
    limit: config.ec2ChangeLimit,
    windowMs: config.ec2ChangeWindow * 1000,
  });
  return {
    credentials,
    checker,
    ...(keyring ? { keyring } : {}),
    requireServiceToken: config.s3tokensRequireServiceToken,
    changes,
  };
}
