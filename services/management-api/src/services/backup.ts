import { errors } from '@cairn/domain';
import type { Knex } from 'knex';
import { isEmbedded } from '../db/database';
import { dumpEmbedded } from '../db/embedded';
import { withDbErrors } from '../db/errors';
import { recordAudit } from '../repositories/audit';
import { API_ROOT } from '../resources/uris';
import { auditActorOf, type Acting } from './context';
import { requireGlobalAdminToRead, requireStepUp } from './policy';

/**
 * A backup of the embedded database while this process holds it (the data directory admits one
 * process, so `cairn backup` asks the running server). It holds every row, S3 secrets sealed and
 * password and key hashes included: admins of every cluster only, and each one is in the audit
 * trail, recorded before the copy is taken so the backup holds its own record. On Postgres the
 * database is backed up with Postgres's tools (docs/backup.md) and this is refused.
 */
export async function embeddedBackup(db: Knex, acting: Acting): Promise<Blob> {
  requireGlobalAdminToRead(acting.operator, 'a backup of the whole database');
  if (!isEmbedded(db)) {
    throw errors.invalidInput(
      'This management API runs on Postgres, not the embedded database: back it up with pg_dump or a base backup (docs/backup.md).',
    );
  }
  // Every hash and sealed secret, to keep: from a console session, only after a fresh step-up.
  requireStepUp(acting);
  await withDbErrors(() =>
    recordAudit(db, auditActorOf(acting), {
      action: 'backup',
      target: { type: 'backup', id: 'embedded', name: 'embedded database', uri: `${API_ROOT}/backup/` },
      before: null,
      after: null,
    }),
  );
  return (await dumpEmbedded(db))!;
}
