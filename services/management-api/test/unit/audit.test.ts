import { CairnError, NO_QUOTAS, type StorageUser } from '@cairn/domain';
import { parseListQuery } from '../../src/http/filters';
import { DEFAULT_LIMIT, MAX_LIMIT, schemaDocument } from '../../src/http/resource';
import { withoutSecrets } from '../../src/repositories/audit';
import { auditResource } from '../../src/routes/audit';
import { userTarget } from '../../src/services/users';
import { apiKeyJson, operatorJson, userJson } from '../../src/resources/representations';

const SECRET_NAMES = /^(password|password_?hash|api_?key|key|key_?hash(es)?)$/i;

/** Every property name at any depth. */
function namesIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => namesIn(v, out));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      namesIn(v, out);
    }
  }
  return out;
}

const USER: StorageUser = {
  id: '42',
  clusterId: 1,
  username: 'alice',
  passwordScheme: 'scrypt',
  passwordHash: '$scrypt$ln=15,r=8,p=3$c2FsdA$aGFzaA',
  isSuperuser: false,
  enabled: true,
  generation: '3',
  quotas: NO_QUOTAS,
  createdAt: new Date('2026-01-01T00:00:00Z'),
  updatedAt: new Date('2026-01-02T00:00:00Z'),
};

describe('audit snapshots carry no secrets', () => {
  it('when a snapshot holds secrets at any depth and in any spelling, then none survives', () => {
    const snapshot = {
      user: 'alice',
      password: 'correct-horse-battery-staple',
      passwordHash: USER.passwordHash,
      nested: {
        password_hash: 'h',
        api_key: 'k',
        apiKey: 'k',
        list: [{ key: 'k', key_hash: Buffer.from('x'), keyHashes: ['y'] }],
      },
      raw: Buffer.from('secret bytes'),
      token: 't',
      secret: 's',
      when: new Date('2026-01-01T00:00:00Z'),
    };
    const clean = withoutSecrets(snapshot);
    expect(clean).toEqual({ user: 'alice', nested: { list: [{}] }, when: '2026-01-01T00:00:00.000Z' });
    const text = JSON.stringify(clean);
    for (const secret of ['correct-horse', USER.passwordHash, 'secret bytes', '"k"', '"t"', '"s"'])
      expect(text).not.toContain(secret);
  });

  it('when fields merely start like a secret (api_key_id, password_changed, api_keys), then they are kept', () => {
    expect(withoutSecrets({ api_key_id: '1', password_changed: true, api_keys: [{ id: '1' }] })).toEqual({
      api_key_id: '1',
      password_changed: true,
      api_keys: [{ id: '1' }],
    });
  });

  it('when the snapshots the routes record are built from full records, then no secret name or value is in them', () => {
    const keyInfo = { id: '7', operatorId: 3, createdAt: new Date('2026-01-01T00:00:00Z') };
    const operator = {
      id: 3,
      name: 'ops',
      role: 'admin' as const,
      clusterIds: [1],
      createdAt: new Date(),
      updatedAt: new Date(),
    };
    const snapshots = [
      userJson(USER),
      { ...userJson(USER), password_changed: true },
      apiKeyJson(keyInfo),
      { ...operatorJson(operator), api_keys: [apiKeyJson(keyInfo)] },
    ];
    for (const s of snapshots) {
      const stored = withoutSecrets(s);
      expect(namesIn(stored).filter((n) => SECRET_NAMES.test(n))).toEqual([]);
      expect(JSON.stringify(stored)).not.toContain(USER.passwordHash);
      // The snapshot builders themselves leak nothing: the sanitiser is a second line, not the first.
      expect(stored).toEqual(JSON.parse(JSON.stringify(s)));
    }
  });

  it('when a user is the target, then its type, id, name and URI identify it', () => {
    expect(userTarget(USER)).toEqual({ type: 'users', id: '42', name: 'alice', uri: '/api/v1/users/42/' });
  });
});

describe('audit list filters', () => {
  const parse = (params: Array<[string, string]>) => parseListQuery(auditResource, params, DEFAULT_LIMIT, MAX_LIMIT);
  const refusal = (params: Array<[string, string]>): string => {
    try {
      parse(params);
    } catch (e) {
      if (e instanceof CairnError) return e.message;
      throw e;
    }
    throw new Error('expected a refusal');
  };

  it.each([
    ['2026-11-23', '2026-11-23T00:00:00.000Z'],
    ['2026-11-23T10:30', '2026-11-23T10:30:00.000Z'],
    ['2026-11-23T10:30:15Z', '2026-11-23T10:30:15.000Z'],
    ['2026-11-23T10:30:15.123456Z', '2026-11-23T10:30:15.123Z'],
    ['2026-11-23 10:30:15+02:00', '2026-11-23T08:30:15.000Z'],
    ['2026-11-23T10:30:15-0130', '2026-11-23T12:00:15.000Z'],
  ])('when time__gte is %s, then it is compared as %s (UTC when no offset is given)', (raw, iso) => {
    expect(parse([['time__gte', raw]]).filters).toEqual([
      { alias: 'a', column: 'occurred_at', lookup: 'gte', values: [iso] },
    ]);
  });

  it.each([
    'yesterday',
    '2026-02-30',
    '2026-13-01',
    '2026-11-23T25:00Z',
    '0000-01-01',
    '0001-01-01T00:00+01:00',
    '9999-12-31T23:59-01:00',
    "2026-11-23' OR 1=1",
    '',
  ])('when a time filter is %p, then 400 mismatched type (never a database error)', (raw) => {
    expect(refusal([['time__lt', raw]])).toBe('Invalid resource lookup data provided (mismatched type).');
  });

  it('when filtering on the snapshots, then 400 says the field does not allow filtering', () => {
    expect(refusal([['before', 'x']])).toBe("The 'before' field does not allow filtering.");
    expect(refusal([['action__startswith', 'cr']])).toBe(
      "'startswith' is not an allowed filter on the 'action' field.",
    );
  });

  it('when several actions are given with __in, then they become one IN filter', () => {
    expect(
      parse([
        ['action__in', 'create,delete'],
        ['action__in', 'update'],
      ]).filters,
    ).toEqual([{ alias: 'a', column: 'action', lookup: 'in', values: ['create', 'delete', 'update'] }]);
  });

  it('when the schema is asked for, then it is read-only: GET only, every field readonly', () => {
    const schema = schemaDocument(auditResource) as {
      allowed_list_http_methods: string[];
      allowed_detail_http_methods: string[];
      fields: Record<string, { readonly: boolean; type: string }>;
    };
    expect(schema.allowed_list_http_methods).toEqual(['get']);
    expect(schema.allowed_detail_http_methods).toEqual(['get']);
    expect(Object.values(schema.fields).every((f) => f.readonly)).toBe(true);
    expect(schema.fields.before!.type).toBe('dict');
  });
});
