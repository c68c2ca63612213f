import type { Endpoints } from '../src/keystone/documents';
import { EC2_CREDENTIAL_METHOD, s3TokenRecord, s3TokensBody } from '../src/keystone/s3-token-document';
import { asText } from '../src/keystone/wsgi-names';

const endpoints: Endpoints = {
  authUrl: 'https://auth.example.com/auth',
  storageUrl: 'https://swift.example.com/v1',
  region: 'RegionOne',
};
const times = { nowMs: Date.parse('2026-11-23T21:30:00.123Z'), lifetimeSeconds: 3600, auditId: 'audit-id-0123456789' };
const alice = { id: '7f0c1c9e-user-row-id', username: 'alice', isSuperuser: false, generation: 'gen-42' };
const root = { id: '11111111-user-row-id', username: 'root', isSuperuser: true, generation: 'gen-7' };

type Doc = { token: Record<string, unknown> & { roles: { id: string; name: string }[] } };
const render = (user: typeof alice, options = {}) =>
  s3TokensBody(s3TokenRecord(user, times), endpoints, options) as unknown as Doc;

/**
 * What Swift's s3token does with the answer (swift/common/middleware/s3api/s3token.py,
 * parse_v3_response): the headers keystoneauth reads, and the tenant whose account the request
 * is sent to. Written out here so that a field it needs cannot go missing unnoticed.
 */
function parseV3Response(doc: Doc) {
  const t = doc.token as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const headers = {
    'X-Identity-Status': 'Confirmed',
    'X-Roles': t.roles.map((r: { name: string }) => r.name).join(','),
    'X-User-Id': t.user.id,
    'X-User-Name': t.user.name,
    'X-User-Domain-Id': t.user.domain.id,
    'X-User-Domain-Name': t.user.domain.name,
    'X-Tenant-Id': t.project.id,
    'X-Tenant-Name': t.project.name,
    'X-Project-Id': t.project.id,
    'X-Project-Name': t.project.name,
    'X-Project-Domain-Id': t.project.domain.id,
    'X-Project-Domain-Name': t.project.domain.name,
  };
  return { headers, account: `AUTH_${t.project.id}` };
}

describe('the Keystone V3 document answering a verified s3tokens request', () => {
  it('when a normal user signed, then the document names the user and its own project, both in the default domain, with the swiftoperator role', () => {
    expect(render(alice)).toEqual({
      token: {
        audit_ids: ['audit-id-0123456789'],
        expires_at: '2026-11-23T22:30:00.123000Z',
        issued_at: '2026-11-23T21:30:00.123000Z',
        methods: ['ec2credential'],
        user: { domain: { id: 'default', name: 'default' }, id: 'alice', name: 'alice', password_expires_at: null },
        project: { domain: { id: 'default', name: 'default' }, id: 'alice', name: 'alice' },
        is_domain: false,
        roles: [{ id: 'swiftoperator', name: 'swiftoperator' }],
      },
    });
  });

  it("when s3token reads it, then keystoneauth gets the user's headers and the request goes to AUTH_<user> as its operator", () => {
    const { headers, account } = parseV3Response(render(alice));
    expect(account).toBe('AUTH_alice');
    expect(headers).toMatchObject({
      'X-User-Id': 'alice',
      'X-Project-Id': 'alice',
      'X-Roles': 'swiftoperator',
      'X-Project-Domain-Id': 'default',
    });
  });

  it('when a superuser signed, then it has the same roles a password token gets: swiftoperator on its own account and ResellerAdmin', () => {
    expect(render(root).token.roles.map((r) => r.name)).toEqual(['swiftoperator', 'ResellerAdmin']);
    expect(parseV3Response(render(root)).headers['X-Roles']).toBe('swiftoperator,ResellerAdmin');
  });

  it('when rendered, then there is no token id, no user row id and no generation anywhere: nothing in it can be presented as a token', () => {
    const doc = render(alice, { withCatalog: true });
    expect(Object.keys(doc)).toEqual(['token']);
    expect(doc.token).not.toHaveProperty('id');
    const text = JSON.stringify(doc);
    for (const internal of [alice.id, alice.generation]) expect(text).not.toContain(internal);
  });

  it('when the record says otherwise, then the method is still ec2credential', () => {
    const record = { ...s3TokenRecord(alice, times), methods: ['password'] };
    expect((s3TokensBody(record, endpoints) as unknown as Doc).token.methods).toEqual([EC2_CREDENTIAL_METHOD]);
  });

  it('when no catalog is asked for, then there is none; when it is, then it points object-store at AUTH_<user>', () => {
    expect(render(alice).token).not.toHaveProperty('catalog');
    const catalog = render(alice, { withCatalog: true }).token.catalog as {
      type: string;
      endpoints: { interface: string; url: string }[];
    }[];
    const swift = catalog.find((s) => s.type === 'object-store')!;
    expect(swift.endpoints.find((e) => e.interface === 'public')!.url).toBe('https://swift.example.com/v1/AUTH_alice');
  });

  it('when the user has a non-ASCII name, then ids and names are spelt as a Python 3 WSGI string by default, and as text when asked', () => {
    const zoe = { ...alice, username: 'zoë' };
    expect(parseV3Response(render(zoe)).account).toBe('AUTH_zo\u00c3\u00ab');
    expect(parseV3Response(render(zoe, { spell: asText })).account).toBe('AUTH_zoë');
  });

  it('when the lifetime is given, then expires_at is that long after issued_at', () => {
    const record = s3TokenRecord(alice, { ...times, lifetimeSeconds: 60 });
    expect(Date.parse(record.expiresAt) - Date.parse(record.issuedAt)).toBe(60_000);
  });

  it('when a record has no project, then it is refused: an s3tokens answer is always scoped', () => {
    const { project: _project, projectDomain: _domain, ...unscoped } = s3TokenRecord(alice, times);
    expect(() => s3TokensBody(unscoped, endpoints)).toThrow(RangeError);
  });
});
