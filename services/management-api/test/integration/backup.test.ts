import { gunzipSync } from 'node:zlib';
import {
  ADMIN,
  ADMIN_AUTH,
  createCluster,
  createOperator,
  DB_KINDS,
  startTestApp,
  type TestApp,
} from '../support/harness';

/** POST /api/v1/backup/: who may take the embedded database away, and what each call leaves behind. */
describe.each(DB_KINDS)('POST /api/v1/backup/ (%s)', (kind) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(kind);
  });
  afterAll(() => app.close());

  const backups = async () =>
    app.db('audit_log').where({ action: 'backup' }).select('operator_name', 'target_uri', 'request_id');

  it('when a reader or an admin limited to a cluster asks, then 403 with a sentence and nothing is recorded', async () => {
    const cluster = await createCluster(app, 'bk-limited');
    const reader = await createOperator(app, 'bk-reader', 'reader');
    const limited = await createOperator(app, 'bk-limited-admin', 'admin', [cluster.resource_uri as string]);
    for (const [auth, who] of [
      [reader, 'is a reader'],
      [limited, 'is limited to some clusters'],
    ] as const) {
      const res = await app.http().post('/api/v1/backup/').set('Authorization', auth);
      expect(res.status).toBe(403);
      expect(res.body.error).toContain(
        `${who}; only an admin with access to every cluster may read a backup of the whole database.`,
      );
    }
    expect(await backups()).toEqual([]);
  });

  it('when a GET is sent, then 405 with Allow: POST (a copy is never taken by a prefetch or a HEAD)', async () => {
    const res = await app.http().get('/api/v1/backup/').set('Authorization', ADMIN_AUTH);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
  });

  if (kind === 'pglite') {
    it('when an admin of every cluster asks, then 200 with the data directory as a gzipped tar, and the backup is audited', async () => {
      const res = await app
        .http()
        .post('/api/v1/backup/')
        .set('Authorization', ADMIN_AUTH)
        .buffer(true)
        .parse((r, done) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => done(null, Buffer.concat(chunks)));
        });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/gzip');
      expect(res.headers['cache-control']).toBe('no-store');
      const tar = gunzipSync(res.body as Buffer);
      expect(tar.includes(Buffer.from('PG_VERSION'))).toBe(true);
      expect(await backups()).toEqual([
        { operator_name: ADMIN.name, target_uri: '/api/v1/backup/', request_id: expect.any(String) },
      ]);
    });
  } else {
    it('when the API runs on Postgres, then 400 pointing to pg_dump, and nothing is recorded', async () => {
      const res = await app.http().post('/api/v1/backup/').set('Authorization', ADMIN_AUTH);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(
        'This management API runs on Postgres, not the embedded database: back it up with pg_dump or a base backup (docs/backup.md).',
      );
      expect(await backups()).toEqual([]);
    });
  }
});
