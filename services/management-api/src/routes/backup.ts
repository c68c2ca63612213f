import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Router, type RequestHandler } from 'express';
import type { Knex } from 'knex';
import { actingOf } from '../http/acting';
import { resourceRoute } from '../http/routing';
import { embeddedBackup } from '../services/backup';

/**
 * `POST /api/v1/backup/`: a backup of the embedded database, answered as a gzipped tar for
 * `cairn restore` (what `cairn backup` calls while `cairn start` runs). A POST, not a GET: each
 * one takes a copy and writes an audit record, which no prefetch, HEAD or cache may cause.
 */
export function backupRouter(db: Knex, auth: RequestHandler): Router {
  const router = Router();
  resourceRoute(router, '/backup/', auth, {
    POST: async (req, res) => {
      const archive = await embeddedBackup(db, actingOf(req, res));
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      res.status(200).set({
        'Content-Type': 'application/gzip',
        'Content-Length': String(archive.size),
        'Content-Disposition': `attachment; filename="cairn-backup-${stamp}.tar.gz"`,
        'Cache-Control': 'no-store',
      });
      await pipeline(Readable.fromWeb(archive.stream() as Parameters<typeof Readable.fromWeb>[0]), res);
    },
  });
  return router;
}
