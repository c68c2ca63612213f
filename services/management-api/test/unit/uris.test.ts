import {
  clusterIdFromRef,
  clusterUri,
  INT4_MAX,
  INT8_MAX,
  parseBigId,
  parseId,
  parseIntId,
  userUri,
} from '../../src/resources/uris';

describe('clusterIdFromRef', () => {
  it.each<[unknown, number | null]>([
    ['/api/v1/clusters/7/', 7],
    ['/api/v1/clusters/7', 7],
    [7, 7],
    ['7', 7],
    ['http://h/api/v1/clusters/7/', 7],
    ['https://controller.example.com:8443/api/v1/clusters/7/', 7],
    ['/api/v1/clusters/2147483647/', 2147483647],
    [2147483647, 2147483647],
  ])('when the reference is %p, then the cluster id is %p', (ref, expected) => {
    expect(clusterIdFromRef(ref)).toBe(expected);
  });

  it.each<[string, unknown]>([
    ['a user URI', '/api/v1/users/7/'],
    ['zero', 0],
    ["'0'", '0'],
    ['2^31 as a number', 2 ** 31],
    ['2^31 as a string', '2147483648'],
    ['2^31 in a URI', '/api/v1/clusters/2147483648/'],
    ['a negative number', -1],
    ['a fraction', 7.5],
    ['NaN', Number.NaN],
    ['an empty string', ''],
    ['a name', 'TestCluster'],
    ['a URI with a trailing segment', '/api/v1/clusters/7/users/'],
    ['a URI with a query', '/api/v1/clusters/7/?x=1'],
    ['another API version', '/api/v2/clusters/7/'],
    ['a relative URI without the leading slash', 'api/v1/clusters/7/'],
    ['a space-padded id', ' 7'],
    ['null', null],
    ['undefined', undefined],
    ['an object', { id: 7 }],
    ['a list', [7]],
    ['a 20-digit id', '12345678901234567890'],
  ])('when the reference is %s, then there is no cluster id', (_label, ref) => {
    expect(clusterIdFromRef(ref)).toBeNull();
  });
});

describe('parseId', () => {
  it.each<[string | undefined, bigint, string | null]>([
    ['1', INT4_MAX, '1'],
    ['2147483647', INT4_MAX, '2147483647'],
    ['2147483648', INT4_MAX, null],
    ['9223372036854775807', INT8_MAX, '9223372036854775807'],
    ['9223372036854775808', INT8_MAX, null],
    ['0', INT8_MAX, null],
    ['-1', INT8_MAX, null],
    ['', INT8_MAX, null],
    [undefined, INT8_MAX, null],
    ['1e3', INT8_MAX, null],
    ['12a', INT8_MAX, null],
    [' 1', INT8_MAX, null],
    ['+1', INT8_MAX, null],
    ['007', INT4_MAX, '7'],
  ])('when the raw id is %p with max %p, then it is %p', (raw, max, expected) => {
    expect(parseId(raw, max)).toBe(expected);
  });

  it('when parseIntId gets an int4 id, then it is a number; past int4 it is null', () => {
    expect(parseIntId('42')).toBe(42);
    expect(parseIntId('2147483648')).toBeNull();
  });

  it('when parseBigId gets a bigint id, then it is the exact decimal string', () => {
    expect(parseBigId('9007199254740993')).toBe('9007199254740993');
  });
});

describe('resource URIs', () => {
  it('when URIs are built, then they are under /api/v1 and end in a slash', () => {
    expect(clusterUri(2)).toBe('/api/v1/clusters/2/');
    expect(userUri('12')).toBe('/api/v1/users/12/');
  });
});
