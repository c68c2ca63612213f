import { schemaDocument, STRING_LOOKUPS } from '../../src/http/resource';
import { clustersResource } from '../../src/routes/clusters';
import { usersResource } from '../../src/routes/users';

type FieldDoc = Record<string, unknown>;

describe('schema document', () => {
  const users = schemaDocument(usersResource);
  const fields = users.fields as Record<string, FieldDoc>;

  it('when built for users, then methods are lower case and defaults are tastypie’s', () => {
    expect(users.allowed_list_http_methods).toEqual(['get', 'post', 'patch']);
    expect(users.allowed_detail_http_methods).toEqual(['get', 'patch', 'delete']);
    expect(users.default_format).toBe('application/json');
    expect(users.default_limit).toBe(20);
  });

  it('when built for users, then every field has type, nullable, readonly, help_text, unique, blank and default', () => {
    expect(Object.keys(fields).sort()).toEqual([
      'bytes_used',
      'cluster',
      'enabled',
      'id',
      'is_superuser',
      'object_count',
      'password',
      'password_hash',
      'password_scheme',
      'quota_applied_at',
      'quota_bytes',
      'quota_bytes_policy',
      'quota_count',
      'quota_count_policy',
      'quota_error',
      'quota_status',
      'resource_uri',
      'tempauth_user',
      'usage_sampled_at',
      'user',
    ]);
    for (const f of Object.values(fields)) {
      for (const key of [
        'blank',
        'default',
        'help_text',
        'nullable',
        'primary_key',
        'readonly',
        'type',
        'unique',
        'verbose_name',
      ])
        expect(f).toHaveProperty(key);
    }
  });

  it("when built, then only id is the primary key and verbose_name is the name with spaces, as tastypie's", () => {
    expect(
      Object.entries(fields)
        .filter(([, f]) => f.primary_key === true)
        .map(([name]) => name),
    ).toEqual(['id']);
    expect(fields.is_superuser!.verbose_name).toBe('is superuser');
    expect(fields.resource_uri!.verbose_name).toBe('resource uri');
    expect(fields.user!.verbose_name).toBe('user');
  });

  it('when a field has no default, then default is "No default provided." and blank is false', () => {
    expect(fields.user!.default).toBe('No default provided.');
    expect(fields.user!.blank).toBe(false);
  });

  it('when a field has a default, then it is shown and the field may be blank', () => {
    expect(fields.enabled).toMatchObject({ type: 'boolean', default: true, blank: true });
    expect(fields.is_superuser).toMatchObject({ type: 'boolean', default: false, blank: true });
  });

  it('when a field is read-only or unique, then it says so', () => {
    expect(fields.id).toMatchObject({ readonly: true, unique: true, type: 'string' });
    expect(fields.resource_uri).toMatchObject({ readonly: true });
    expect(fields.password).toMatchObject({ readonly: false });
  });

  it('when a field is related, then its type is related with related_type to_one', () => {
    expect(fields.cluster).toMatchObject({ type: 'related', related_type: 'to_one' });
  });

  it('when filtering is described, then a related field shows 2 (ALL_WITH_RELATIONS) and others their lookups; password is absent', () => {
    const filtering = users.filtering as Record<string, unknown>;
    expect(filtering.cluster).toBe(2);
    expect(filtering.user).toEqual([...STRING_LOOKUPS]);
    expect(filtering.enabled).toEqual(['exact']);
    expect(filtering).not.toHaveProperty('password');
  });

  it('when ordering is described, then it lists orderable fields only', () => {
    expect(users.ordering).toEqual(expect.arrayContaining(['id', 'user', 'cluster', 'enabled', 'is_superuser']));
    expect(users.ordering).not.toContain('password');
    expect(users.ordering).not.toContain('resource_uri');
  });

  it('when built for clusters, then id is an integer and region defaults to RegionOne', () => {
    const doc = schemaDocument(clustersResource);
    const clusterFields = doc.fields as Record<string, FieldDoc>;
    expect(clusterFields.id).toMatchObject({ type: 'integer', readonly: true });
    expect(clusterFields.region).toMatchObject({ default: 'RegionOne', blank: true });
  });
});
