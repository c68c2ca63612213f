import { dropUnchangedReadOnly, sameCluster, sameId, sameText, sameUri, sameUuid } from '../../src/http/read-only';

describe('dropUnchangedReadOnly', () => {
  const user = {
    id: sameId('42'),
    cluster: sameCluster(3),
    user: sameText('eve'),
    resource_uri: sameUri('/api/v1/users/42/'),
  };

  it('when the body has a __proto__ field, then it is kept as a field (for validation to refuse), not made the prototype', () => {
    const body = JSON.parse('{"__proto__": {"enabled": false}, "id": "42"}') as Record<string, unknown>;
    const kept = dropUnchangedReadOnly(body, user);
    expect(Object.keys(kept)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
    expect((kept as { enabled?: unknown }).enabled).toBeUndefined();
  });

  it('when read-only fields equal their current values, then they are dropped and the rest is kept', () => {
    const body = {
      id: '42',
      cluster: '/api/v1/clusters/3/',
      user: 'eve',
      resource_uri: '/api/v1/users/42/',
      enabled: false,
    };
    expect(dropUnchangedReadOnly(body, user)).toEqual({ enabled: false });
  });

  it.each([
    ['id', 42],
    ['id', ' 42 '],
    ['cluster', 3],
    ['cluster', '3'],
    ['cluster', 'https://api.example.com/api/v1/clusters/3'],
    ['resource_uri', 'http://h:8000/api/v1/users/42'],
  ])('when %s is given as %j, then it counts as unchanged', (field, value) => {
    expect(dropUnchangedReadOnly({ [field]: value }, user)).toEqual({});
  });

  it.each([
    ['id', '43'],
    ['id', 42.5],
    ['id', null],
    ['cluster', '/api/v1/clusters/4/'],
    ['cluster', '/api/v1/users/3/'],
    ['user', 'Eve'],
    ['resource_uri', '/api/v1/users/420/'],
    ['resource_uri', '/api/v1/clusters/42/'],
  ])('when %s is given as %j, then 400 names the field', (field, value) => {
    expect(() => dropUnchangedReadOnly({ [field]: value }, user)).toThrow(
      `The '${field}' field is read-only and cannot be changed.`,
    );
  });

  it('when a uuid differs only in case, then it is unchanged', () => {
    const uuid = '3f0c4a4e-2a7e-4d55-9a3b-1f2e3d4c5b6a';
    expect(dropUnchangedReadOnly({ uuid: uuid.toUpperCase() }, { uuid: sameUuid(uuid) })).toEqual({});
  });

  it('when a field is named like an Object prototype member, then it is passed on for the schema to judge', () => {
    expect(dropUnchangedReadOnly({ constructor: 1 }, user)).toEqual({ constructor: 1 });
  });
});
