import { buildMeta } from '../../src/http/pagination';
import type { QueryParams } from '../../src/http/filters';

const USERS = '/api/v1/users/';

describe('list meta', () => {
  it('when on the first page of several, then previous is null and next is offset 20', () => {
    expect(buildMeta(USERS, [], 20, 0n, 45)).toEqual({
      limit: 20,
      next: '/api/v1/users/?limit=20&offset=20',
      offset: 0,
      previous: null,
      total_count: 45,
    });
  });

  it('when on a middle page, then previous and next point one page back and forward (offset=0 written)', () => {
    const meta = buildMeta(USERS, [['offset', '20']], 20, 20n, 45);
    expect(meta.previous).toBe('/api/v1/users/?limit=20&offset=0');
    expect(meta.next).toBe('/api/v1/users/?limit=20&offset=40');
    expect(meta.offset).toBe(20);
  });

  it('when on the last page, then next is null', () => {
    expect(buildMeta(USERS, [], 20, 40n, 45).next).toBeNull();
  });

  it('when offset + limit equals the total, then next is null', () => {
    expect(buildMeta(USERS, [], 20, 20n, 40).next).toBeNull();
  });

  it('when everything fits on one page, then next and previous are both null', () => {
    const meta = buildMeta(USERS, [], 20, 0n, 3);
    expect(meta.next).toBeNull();
    expect(meta.previous).toBeNull();
  });

  it('when the list is empty, then next and previous are null and total_count is 0', () => {
    expect(buildMeta(USERS, [], 20, 0n, 0)).toEqual({
      limit: 20,
      next: null,
      offset: 0,
      previous: null,
      total_count: 0,
    });
  });

  it('when offset - limit < 0 (offset 10, limit 20), then previous is null', () => {
    expect(buildMeta(USERS, [], 20, 10n, 45).previous).toBeNull();
  });

  it('when offset - limit is exactly 0, then previous is the offset=0 URL', () => {
    expect(buildMeta(USERS, [], 20, 20n, 45).previous).toBe('/api/v1/users/?limit=20&offset=0');
  });

  it('when the request had other parameters, then they come first in their original order, then limit and offset', () => {
    const params: QueryParams = [
      ['format', 'json'],
      ['cluster', '2'],
    ];
    expect(buildMeta(USERS, params, 20, 0n, 45).next).toBe('/api/v1/users/?format=json&cluster=2&limit=20&offset=20');
  });

  it('when values hold / and , , then they are form-encoded as Python urlencode does', () => {
    const params: QueryParams = [
      ['cluster', '/api/v1/clusters/1/'],
      ['cluster__in', '1,3'],
    ];
    expect(buildMeta(USERS, params, 20, 0n, 45).next).toBe(
      '/api/v1/users/?cluster=%2Fapi%2Fv1%2Fclusters%2F1%2F&cluster__in=1%2C3&limit=20&offset=20',
    );
  });

  it('when a value holds a space, then it is encoded as +', () => {
    expect(buildMeta(USERS, [['user__startswith', 'a b']], 20, 0n, 45).next).toBe(
      '/api/v1/users/?user__startswith=a+b&limit=20&offset=20',
    );
  });

  it("when values hold characters quote_plus escapes (* ' ( ) ! & = + and non-ASCII), then they are percent-encoded", () => {
    expect(buildMeta(USERS, [['user', "*'()!&=+é"]], 20, 0n, 45).next).toBe(
      '/api/v1/users/?user=%2A%27%28%29%21%26%3D%2B%C3%A9&limit=20&offset=20',
    );
  });

  it('when a value holds characters quote_plus keeps (_ . - ~), then they stay as they are', () => {
    expect(buildMeta(USERS, [['user', 'a_b.c-d~e']], 20, 0n, 45).next).toBe(
      '/api/v1/users/?user=a_b.c-d~e&limit=20&offset=20',
    );
  });

  it('when offset and limit were already in the params, then they are replaced and moved last, never duplicated', () => {
    const params: QueryParams = [
      ['offset', '20'],
      ['user__startswith', 'a'],
      ['limit', '20'],
    ];
    const meta = buildMeta(USERS, params, 20, 20n, 100);
    expect(meta.next).toBe('/api/v1/users/?user__startswith=a&limit=20&offset=40');
    expect(meta.previous).toBe('/api/v1/users/?user__startswith=a&limit=20&offset=0');
  });

  it('when limit was 0 in the request (meaning 1000), then the URLs carry limit=1000', () => {
    expect(buildMeta(USERS, [['limit', '0']], 1000, 0n, 2500).next).toBe('/api/v1/users/?limit=1000&offset=1000');
  });

  it('when a repeated key was given, then every occurrence is kept in order', () => {
    const params: QueryParams = [
      ['user__in', 'a'],
      ['format', 'json'],
      ['user__in', 'b'],
    ];
    expect(buildMeta(USERS, params, 20, 0n, 45).next).toBe(
      '/api/v1/users/?user__in=a&format=json&user__in=b&limit=20&offset=20',
    );
  });

  it('when the request carried an api_key, then the key is not copied into the page URLs', () => {
    const meta = buildMeta(
      USERS,
      [
        ['username', 'root'],
        ['api_key', 'secret-key'],
        ['user', 'a'],
      ],
      20,
      20n,
      100,
    );
    expect(meta.next).toBe('/api/v1/users/?user=a&limit=20&offset=40');
    expect(meta.previous).not.toContain('secret-key');
  });

  it('when the offset is past 2^53, then meta.offset is the exact decimal string', () => {
    const offset = 10n ** 30n;
    const meta = buildMeta(USERS, [], 20, offset, 5);
    expect(meta.offset).toBe('1000000000000000000000000000000');
    expect(meta.next).toBeNull();
    expect(meta.previous).toBe('/api/v1/users/?limit=20&offset=999999999999999999999999999980');
  });
});
