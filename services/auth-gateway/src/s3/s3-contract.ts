/** Placeholder until the shared names land in @cairn/contract. */
export const S3_CREDENTIAL_TABLE = 's3_credentials';
export const S3_CREDENTIAL_USER_COLUMN = 'storage_user_id';
export const S3_CREDENTIAL_CHANGES_CHANNEL = 'cairn_s3_credentials';

/** The access key a change notice names, or null when it cannot be read (then forget everything). */
export function parseS3CredentialNotice(payload: string | undefined): string | null {
  try {
    const value = JSON.parse(payload ?? '') as { access_key?: unknown };
    return typeof value.access_key === 'string' ? value.access_key : null;
  } catch {
    return null;
  }
}

/** How many S3 credentials one storage user may hold. */
export const MAX_S3_CREDENTIALS_PER_USER = 2;
export const AUDIT_TABLE = 'audit_log';
