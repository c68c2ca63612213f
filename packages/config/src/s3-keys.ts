import Joi from 'joi';

/**
 * The keys that seal S3 secrets, the same in the management API (which seals the secrets it
 * creates) and every gateway (which opens them to check signatures, and seals the OS-EC2 ones it
 * creates). Parsed by @cairn/domain's parseS3SecretKeys; rotation is in docs/s3.md.
 */
export const s3KeyringConfig = {
  s3SecretKeys: {
    env: 'CAIRN_S3_SECRET_KEYS',
    doc: 'Keys that seal and open S3 secrets: comma-separated `<key id>:<base64 of 32 random bytes>`, the same list in the management API and every gateway (docs/s3.md). Unset: no S3 credential can be created or checked.',
    schema: Joi.string().max(16384),
    secret: true,
  },
  s3CurrentKeyId: {
    env: 'CAIRN_S3_CURRENT_KEY_ID',
    doc: 'The key id of CAIRN_S3_SECRET_KEYS that new S3 secrets are sealed under. Unset: the only key listed (required when several are).',
    schema: Joi.string().max(32),
  },
};
