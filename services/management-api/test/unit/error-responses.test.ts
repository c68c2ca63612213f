import express, { type Express, type RequestHandler } from 'express';
import request from 'supertest';
import { parseStringPromise } from 'xml2js';
import type { Operator } from '@cairn/domain';
import type { Db } from '../../src/db/database';
import { errorHandler } from '../../src/http/errors';
import { clustersRouter } from '../../src/routes/clusters';

/**
 * The clusters router behind the real error handler, without a database: every request here is
 * refused before any query runs, so the Db is never touched.
 */
function appWithoutDatabase(): Express {
  const admin: Operator = {
    id: 1,
    name: 'root',
    role: 'admin',
    clusterIds: [],
    createdAt: new Date(0),
    updatedAt: new Date(0),
  };
  const auth: RequestHandler = (_req, res, next) => {
    res.locals.operator = admin;
    next();
  };
  const unusedDb = new Proxy(
    {},
    {
      get: () => {
        throw new Error('the database must not be used here');
      },
    },
  ) as unknown as Db;
  const app = express();
  app.set('query parser', 'simple');
  const api = express.Router();
  api.use(express.raw({ type: () => true }));
  api.use(clustersRouter(unusedDb, auth));
  app.use('/api/v1', api);
  app.use(errorHandler(() => ({ error: () => undefined })));
  return app;
}

describe('error responses rendered as XML', () => {
  const app = appWithoutDatabase();

  it('when a bad limit is sent with format=xml, then the 400 is a tastypie XML <response><error>', async () => {
    const res = await request(app).get('/api/v1/clusters/?format=xml&limit=abc');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/xml; charset=utf-8');
    expect(res.text).toBe(
      "<?xml version='1.0' encoding='utf-8'?>\n<response><error>Invalid limit 'abc' provided. Please provide a positive integer.</error></response>",
    );
  });

  it('when a bad limit holding a control character (%01) is sent with format=xml, then the answer is still a 400 with well-formed XML', async () => {
    const res = await request(app).get('/api/v1/clusters/?format=xml&limit=%01');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/xml; charset=utf-8');
    const doc = await parseStringPromise(res.text);
    expect(doc.response.error[0]).toContain('Please provide a positive integer.');
  });

  it('when order_by names U+FFFF with format=xml, then the answer is still a 400 with well-formed XML', async () => {
    const res = await request(app).get('/api/v1/clusters/?format=xml&order_by=%EF%BF%BF');
    expect(res.status).toBe(400);
    await expect(parseStringPromise(res.text)).resolves.toBeDefined();
  });

  it('when a bad limit holding a control character is sent as JSON, then the 400 JSON escapes it', async () => {
    const res = await request(app).get('/api/v1/clusters/?limit=%01');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.text).toBe('{"error": "Invalid limit \'\\u0001\' provided. Please provide a positive integer."}');
  });

  it('when a cluster id in the path is markup, then the 404 message does not reflect it as markup', async () => {
    const res = await request(app).get('/api/v1/clusters/%3Cscript%3E/');
    expect(res.status).toBe(404);
    expect(res.text).not.toContain('<script>');
  });
});
