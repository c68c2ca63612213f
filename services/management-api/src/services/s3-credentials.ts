import {
  errors,
  escapeHtml,
  generateS3AccessKey,
  generateS3Secret,
  needsResealing,
  openS3Secret,
  S3SecretError,
  sealedS3SecretKeyId,
  sealS3Secret,
  type S3CredentialCreateInput,
  type S3SecretKeyring,
} from '@cairn/domain';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { recordAudit, type AuditTarget } from '../repositories/audit';
import type { ListQuery, Page } from '../repositories/list-types';
import {
  createS3Credential,
  deleteS3Credential,
  getS3Credential,
  listS3Credentials,
  replaceSealedSecret,
  sealedSecretsAfter,
  sealedSecretsByKeyId,
  type S3Credential,
} from '../repositories/s3-credentials';
import { getStorageUserSummary } from '../repositories/storage-users';
import { s3CredentialJson } from '../resources/representations';
import { parseBigId, s3CredentialUri, userIdFromRef } from '../resources/uris';
import { auditActorOf, type Acting } from './context';
import { canSeeCluster, requireWriter, requireWriterOn, visibleClusters } from './policy';

/**
 * S3 credentials of storage users. Whoever may manage a user may manage its credentials (admins,
 * within their cluster limits); readers may list them. The secret is generated here, sealed under
 * the keyring's current key before it is stored, returned once to the creating request and never
 * again; the audit trail records the access key and the owner only.
 */

export const s3CredentialTarget = (c: Pick<S3Credential, 'id' | 'accessKey'>): AuditTarget => ({
  type: 's3_credentials',
  id: c.id,
  name: c.accessKey,
  uri: s3CredentialUri(c.id),
});

const notFound = (raw: unknown) => errors.notFound(`No S3 credential with id '${escapeHtml(String(raw))}'.`);

/** Without keys nothing can be sealed: say what to configure rather than store a secret in the clear. */
const notConfigured = () =>
  errors.unavailable(
    'S3 credentials cannot be created: this management API has no CAIRN_S3_SECRET_KEYS to seal their secrets with (see docs/s3.md).',
  );

async function findVisible(db: Db, acting: Acting, raw: string | undefined): Promise<S3Credential> {
  const id = parseBigId(raw);
  const credential = id === null ? null : await getS3Credential(db, id);
  if (!credential || !canSeeCluster(acting.operator, credential.clusterId)) throw notFound(raw);
  return credential;
}

export const list = (db: Db, acting: Acting, query: ListQuery): Promise<Page<S3Credential>> =>
  listS3Credentials(db, query, visibleClusters(acting.operator));

export const show = (db: Db, acting: Acting, rawId: string | undefined): Promise<S3Credential> =>
  findVisible(db, acting, rawId);

/** A new credential and its secret, which the caller shows once. */
export async function create(
  db: Db,
  acting: Acting,
  inputOf: () => Promise<S3CredentialCreateInput>,
  keyring: S3SecretKeyring | undefined,
): Promise<{ credential: S3Credential; secret: string }> {
  requireWriter(acting.operator);
  const input = await inputOf();
  const userId = userIdFromRef(input.user);
  const user = userId === null ? null : await getStorageUserSummary(db, userId);
  if (!user || !canSeeCluster(acting.operator, user.clusterId)) {
    throw errors.invalidInput(
      `Could not find the provided users object via resource URI '${escapeHtml(String(input.user))}'.`,
    );
  }
  requireWriterOn(acting.operator, user.clusterId);
  if (!keyring) throw notConfigured();
  const accessKey = generateS3AccessKey();
  const secret = generateS3Secret();
  const sealed = sealS3Secret(keyring, accessKey, secret);
  const credential = await withDbErrors(
    () =>
      db.transaction(async (trx) => {
        const created = await createS3Credential(trx, user.id, accessKey, sealed, input.expires_at ?? null);
        await recordAudit(trx, auditActorOf(acting), {
          action: 'create',
          target: s3CredentialTarget(created),
          before: null,
          after: s3CredentialJson(created),
        });
        return created;
      }),
    // The user was deleted between the read above and the insert.
    {
      s3_credentials_storage_user_id_fkey: () =>
        errors.invalidInput(
          `Could not find the provided users object via resource URI '${escapeHtml(String(input.user))}'.`,
        ),
    },
  );
  return { credential, secret };
}

export async function remove(db: Db, acting: Acting, rawId: string | undefined): Promise<void> {
  requireWriter(acting.operator);
  const existing = await findVisible(db, acting, rawId);
  requireWriterOn(acting.operator, existing.clusterId);
  await withDbErrors(() =>
    db.transaction(async (trx) => {
      const deleted = await deleteS3Credential(trx, existing.id);
      if (!deleted) throw notFound(existing.id);
      await recordAudit(trx, auditActorOf(acting), {
        action: 'delete',
        target: s3CredentialTarget(deleted),
        before: s3CredentialJson(deleted),
        after: null,
      });
    }),
  );
}

export interface ResealResult {
  checked: number;
  resealed: number;
  /**
   * Access keys whose secret could not be opened (its key is no longer configured, or it was altered): left as they
   * are.
   */
  unopenable: string[];
}

/**
 * Key rotation's last step: re-encrypts under the keyring's current key every secret sealed under
 * another one, `batchSize` rows at a time in id order. Each row is replaced only if it still holds
 * what was read, so a credential deleted or resealed meanwhile is left alone; a run that stops
 * half-way is finished by running it again (rows already under the current key are skipped).
 */
export async function resealAll(
  db: Db,
  keyring: S3SecretKeyring,
  batchSize = 500,
  onBatch?: (r: ResealResult) => void,
): Promise<ResealResult> {
  const result: ResealResult = { checked: 0, resealed: 0, unopenable: [] };
  let after = '0';
  for (;;) {
    const batch = await sealedSecretsAfter(db, after, batchSize);
    if (batch.length === 0) return result;
    for (const row of batch) {
      result.checked++;
      if (!needsResealing(keyring, row.sealed)) continue;
      let secret: string;
      try {
        secret = openS3Secret(keyring, row.accessKey, row.sealed);
      } catch (e) {
        if (!(e instanceof S3SecretError)) throw e;
        result.unopenable.push(row.accessKey);
        continue;
      }
      const resealed = sealS3Secret(keyring, row.accessKey, secret);
      if (await replaceSealedSecret(db, row.id, row.sealed, resealed)) result.resealed++;
    }
    after = batch[batch.length - 1]!.id;
    onBatch?.({ ...result, unopenable: [...result.unopenable] });
  }
}

/** Stored S3 secrets the keyring cannot open, all under one key id. */
export interface UnopenableSecrets {
  keyId: string;
  /** How many stored secrets name that key id. */
  credentials: number;
  /** `missing`: no such key id in the keyring (or no keyring); `other-key`: there is, and they do not open under it. */
  why: 'missing' | 'other-key';
}

/** Secrets tried per key id: one altered row does not make a whole key look wrong. */
const SAMPLES_PER_KEY_ID = 3;

/**
 * What a start checks before it serves: that every key id the stored S3 secrets are sealed under
 * is in the keyring and opens them (a few tried per key id; one that opens is enough). Empty when
 * all do, or none are stored. A value that is not a sealed secret at all is one damaged row, not
 * a question of keys, and is left to the credential it belongs to.
 */
export async function unopenableSecrets(db: Db, keyring: S3SecretKeyring | undefined): Promise<UnopenableSecrets[]> {
  const found: UnopenableSecrets[] = [];
  for (const group of await sealedSecretsByKeyId(db, SAMPLES_PER_KEY_ID)) {
    const sealed = group.samples.filter((s) => sealedS3SecretKeyId(s.sealed) !== null);
    if (sealed.length === 0) continue;
    if (!keyring?.keys.has(group.keyId)) {
      found.push({ keyId: group.keyId, credentials: group.count, why: 'missing' });
      continue;
    }
    const opens = sealed.some((s) => {
      try {
        openS3Secret(keyring, s.accessKey, s.sealed);
        return true;
      } catch (e) {
        if (e instanceof S3SecretError) return false;
        throw e;
      }
    });
    if (!opens) found.push({ keyId: group.keyId, credentials: group.count, why: 'other-key' });
  }
  return found;
}
