import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { startStack, type Stack } from '../support/stack';

/** Golden samples from a real Keystone 22; see fixtures/keystone/README.md. */
const FIXTURES = join(__dirname, 'fixtures', 'keystone');
const KEYSTONE_BASE = 'http://127.0.0.1:5000';
const golden = (name: string) => ({
  body: JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')) as unknown,
  status: Number(/^HTTP\/1\.1 (\d{3})/.exec(readFileSync(join(FIXTURES, `${name}.resp`), 'utf8'))![1]),
});

/** The golden document with Keystone's own base URL replaced by the gateway's /auth root. */
function rebased(body: unknown, root: string): unknown {
  return JSON.parse(JSON.stringify(body).split(`${KEYSTONE_BASE}/`).join(`${root}/`));
}

/** The default cluster's auth_url: what the gateway hands out unless CAIRN_GATEWAY_PUBLIC_URL says otherwise. */
const root = 'http://127.0.0.1:5000/auth';

describe('identity version discovery', () => {
  let stack: Stack;
  let url: string;
  beforeAll(async () => {
    stack = await startStack({ database: 'pglite' });
    url = stack.gatewayUrl;
  });
  afterAll(() => stack.close());

  it('when the /auth root is fetched, then it answers 300 with the golden Keystone versions document pointing at its own /auth/v3/', async () => {
    const sample = golden('01_get_root');
    const res = await request(url).get('/auth/').set('Accept', 'application/json');
    expect(res.status).toBe(sample.status);
    expect(res.status).toBe(300);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(rebased(sample.body, root));
    expect(res.headers.location).toBe(`${root}/v3/`);
  });

  it('when /auth is fetched without the trailing slash, then the same document comes back', async () => {
    const res = await request(url).get('/auth');
    expect(res.status).toBe(300);
    expect(res.body.versions.values[0].links).toEqual([{ rel: 'self', href: `${root}/v3/` }]);
  });

  it('when /auth/v3 is fetched, then it answers 200 with the golden Keystone v3 version document', async () => {
    const v3 = golden('02_get_v3');
    for (const path of ['/auth/v3', '/auth/v3/']) {
      const res = await request(url).get(path);
      expect(res.status).toBe(v3.status);
      expect(res.body).toEqual(rebased(v3.body, root));
    }
  });

  it('when the discovery documents are fetched, then they carry what keystoneauth requires of a version entry', async () => {
    const list = (await request(url).get('/auth/')).body.versions.values;
    const single = (await request(url).get('/auth/v3')).body.version;
    expect(list).toEqual([single]);
    expect(single.id).toMatch(/^v3\.\d+$/);
    expect(['stable', 'current', 'supported']).toContain(single.status);
    expect(single.links.filter((l: { rel: string }) => l.rel === 'self')).toHaveLength(1);
  });

  it("when the request names another Host, then the hrefs still use the cluster's auth_url", async () => {
    const res = await request(url).get('/auth/').set('Host', 'auth.example.com:5000').set('X-Forwarded-Proto', 'https');
    expect(res.body.versions.values[0].links[0].href).toBe(`${root}/v3/`);
  });

  it('when discovery is asked with HEAD, then the status and headers come without a body', async () => {
    const res = await request(url).head('/auth/v3');
    expect(res.status).toBe(200);
    expect(res.text ?? '').toBe('');
  });

  it("when a discovery document is posted to, then the answer is 405 in Keystone's error shape with Allow", async () => {
    const res = await request(url).post('/auth/v3').send({});
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.body).toEqual({ error: { code: 405, title: 'Method Not Allowed', message: expect.any(String) } });
  });
});

describe('identity version discovery with a configured public URL', () => {
  let stack: Stack;
  let url: string;
  beforeAll(async () => {
    stack = await startStack({ database: 'pglite', gateway: { publicUrl: 'https://auth.example.com/swift-auth' } });
    url = stack.gatewayUrl;
  });
  afterAll(() => stack.close());

  it('when a public URL is configured, then the hrefs use it whatever the request says', async () => {
    const root = await request(url).get('/auth/').set('Host', 'internal:5000').set('X-Forwarded-Proto', 'http');
    expect(root.body).toEqual(rebased(golden('01_get_root').body, 'https://auth.example.com/swift-auth'));
    expect(root.headers.location).toBe('https://auth.example.com/swift-auth/v3/');
    const v3 = await request(url).get('/auth/v3');
    expect(v3.body).toEqual(rebased(golden('02_get_v3').body, 'https://auth.example.com/swift-auth'));
  });
});
