import { CairnError } from '@cairn/domain';
import {
  parseLimit,
  parseListQuery,
  parseOffset,
  queryPairs,
  type ListQuery,
  type QueryParams,
} from '../../src/http/filters';
import { DEFAULT_LIMIT, MAX_LIMIT, type ResourceDef } from '../../src/http/resource';
import { clustersResource } from '../../src/routes/clusters';
import { usersResource } from '../../src/routes/users';

const parse = (resource: ResourceDef, params: QueryParams): ListQuery =>
  parseListQuery(resource, params, DEFAULT_LIMIT, MAX_LIMIT);
const users = (params: QueryParams): ListQuery => parse(usersResource, params);
const clusters = (params: QueryParams): ListQuery => parse(clustersResource, params);

function refusal(fn: () => unknown): CairnError {
  try {
    fn();
  } catch (e) {
    if (e instanceof CairnError) return e;
    throw e;
  }
  throw new Error('expected a CairnError');
}
const messageOf = (fn: () => unknown): string => {
  const e = refusal(fn);
  expect(e.code).toBe('INVALID_INPUT');
  return e.message;
};

const MISMATCHED = 'Invalid resource lookup data provided (mismatched type).';

describe('filters on users', () => {
  it("when quota_status is filtered, then the filter is on the joined quota state's alias, never the users' own table", () => {
    expect(users([['quota_status__in', 'error,pending']]).filters).toEqual([
      { alias: 'qa', column: 'status', lookup: 'in', values: ['error', 'pending'] },
    ]);
    expect(users([['quota_applied_at__isnull', 'true']]).filters).toEqual([
      { alias: 'qa', column: 'applied_at', lookup: 'isnull', values: [true] },
    ]);
  });

  it('when quota_status is given a value outside its states, or asked to order, then the refusal says what it takes', () => {
    expect(messageOf(() => users([['quota_status', 'ok']]))).toBe(
      "The 'quota_status' filter takes one of 'applied', 'pending', 'error'.",
    );
    expect(messageOf(() => users([['order_by', '-quota_status']]))).toBe(
      "The 'quota_status' field does not allow ordering.",
    );
  });

  it('when a field is given without a lookup, then the lookup is exact', () => {
    expect(users([['user', 'alice']]).filters).toEqual([
      { alias: 'u', column: 'username', lookup: 'exact', values: ['alice'] },
    ]);
  });

  it('when user__startswith is given, then it is a startswith filter on username', () => {
    expect(users([['user__startswith', 'al']]).filters).toEqual([
      { alias: 'u', column: 'username', lookup: 'startswith', values: ['al'] },
    ]);
  });

  it.each(['exact', 'iexact', 'startswith', 'istartswith', 'contains', 'icontains', 'gt', 'gte', 'lt', 'lte'])(
    'when user__%s is given, then that lookup is used',
    (lookup) => {
      expect(users([[`user__${lookup}`, 'bob']]).filters).toEqual([
        { alias: 'u', column: 'username', lookup, values: ['bob'] },
      ]);
    },
  );

  it('when user__in=a,b is given, then the values are split on commas', () => {
    expect(users([['user__in', 'a,b']]).filters).toEqual([
      { alias: 'u', column: 'username', lookup: 'in', values: ['a', 'b'] },
    ]);
  });

  it('when user__in is repeated, then all values of all occurrences are combined', () => {
    expect(
      users([
        ['user__in', 'a'],
        ['user__in', 'b,c'],
      ]).filters,
    ).toEqual([{ alias: 'u', column: 'username', lookup: 'in', values: ['a', 'b', 'c'] }]);
  });

  it('when a non-in filter is repeated, then the last value wins (as Django QueryDict does)', () => {
    expect(
      users([
        ['user', 'first'],
        ['user', 'last'],
      ]).filters,
    ).toEqual([{ alias: 'u', column: 'username', lookup: 'exact', values: ['last'] }]);
  });

  it('when user__isnull=true is given, then the value is the boolean true', () => {
    expect(users([['user__isnull', 'true']]).filters).toEqual([
      { alias: 'u', column: 'username', lookup: 'isnull', values: [true] },
    ]);
  });

  it.each([
    ['/api/v1/clusters/2/'],
    ['/api/v1/clusters/2'],
    ['2'],
    ['http://controller.example.com/api/v1/clusters/2/'],
  ])('when cluster=%s, then it filters cluster_id on id "2"', (value) => {
    expect(users([['cluster', value]]).filters).toEqual([
      { alias: 'u', column: 'cluster_id', lookup: 'exact', values: ['2'] },
    ]);
  });

  it('when cluster__in=1,3, then it filters cluster_id in ["1","3"]', () => {
    expect(users([['cluster__in', '1,3']]).filters).toEqual([
      { alias: 'u', column: 'cluster_id', lookup: 'in', values: ['1', '3'] },
    ]);
  });

  it('when cluster__in mixes URIs and ids, then all become ids', () => {
    expect(users([['cluster__in', '/api/v1/clusters/1/,3']]).filters[0]!.values).toEqual(['1', '3']);
  });

  it('when cluster__name=x, then the filter chains into the clusters resource with alias c', () => {
    expect(users([['cluster__name', 'x']]).filters).toEqual([
      { alias: 'c', column: 'name', lookup: 'exact', values: ['x'] },
    ]);
  });

  it('when cluster__name__startswith=x, then the chained filter carries the lookup', () => {
    expect(users([['cluster__name__startswith', 'x']]).filters).toEqual([
      { alias: 'c', column: 'name', lookup: 'startswith', values: ['x'] },
    ]);
  });

  it('when cluster__id=2, then the chained filter is on the clusters id', () => {
    expect(users([['cluster__id', '2']]).filters).toEqual([
      { alias: 'c', column: 'id', lookup: 'exact', values: ['2'] },
    ]);
  });

  it('when cluster__id=abc, then it is a mismatched type', () => {
    expect(messageOf(() => users([['cluster__id', 'abc']]))).toBe(MISMATCHED);
  });

  it.each(['abc', '/api/v1/users/2/', '0', '2147483648'])(
    'when cluster=%s (not a cluster reference), then it is a mismatched type',
    (value) => {
      expect(messageOf(() => users([['cluster', value]]))).toBe(MISMATCHED);
    },
  );

  it('when cluster__in has one bad part, then it is a mismatched type', () => {
    expect(messageOf(() => users([['cluster__in', '1,x']]))).toBe(MISMATCHED);
  });

  it('when cluster__foo=x, then foo is not an allowed filter on cluster', () => {
    expect(messageOf(() => users([['cluster__foo', 'x']]))).toBe(
      "'foo' is not an allowed filter on the 'cluster' field.",
    );
  });

  it("when password=x, then the 'password' field does not allow filtering", () => {
    expect(messageOf(() => users([['password', 'x']]))).toBe("The 'password' field does not allow filtering.");
  });

  it('when user__foo=x, then foo is not an allowed filter on user', () => {
    expect(messageOf(() => users([['user__foo', 'x']]))).toBe("'foo' is not an allowed filter on the 'user' field.");
  });

  it('when enabled__startswith=t, then startswith is not allowed on enabled', () => {
    expect(messageOf(() => users([['enabled__startswith', 't']]))).toBe(
      "'startswith' is not an allowed filter on the 'enabled' field.",
    );
  });

  it.each([
    ['true', true],
    ['True', true],
    ['1', true],
    ['false', false],
    ['False', false],
    ['0', false],
  ])('when enabled=%s, then the value is %p', (raw, value) => {
    expect(users([['enabled', raw]]).filters).toEqual([
      { alias: 'u', column: 'enabled', lookup: 'exact', values: [value] },
    ]);
  });

  it.each(['maybe', 'yes', 'TRUE', ''])('when enabled=%p, then it is a mismatched type', (raw) => {
    expect(messageOf(() => users([['enabled', raw]]))).toBe(MISMATCHED);
  });

  it('when id=12 on users, then the id filter value is the decimal string "12"', () => {
    expect(users([['id', '12']]).filters).toEqual([{ alias: 'u', column: 'id', lookup: 'exact', values: ['12'] }]);
  });

  it('when id=abc on users (a bigint id shown as a string), then it is a mismatched type', () => {
    expect(messageOf(() => users([['id', 'abc']]))).toBe(MISMATCHED);
  });

  it('when id__gt=abc on users, then it is a mismatched type', () => {
    expect(messageOf(() => users([['id__gt', 'abc']]))).toBe(MISMATCHED);
  });

  it('when id exceeds bigint on users, then it is a mismatched type', () => {
    expect(messageOf(() => users([['id', '9223372036854775808']]))).toBe(MISMATCHED);
  });

  it('when unknown query keys are given, then they are ignored', () => {
    expect(
      users([
        ['foo', 'bar'],
        ['callback', 'x'],
        ['nonsense__in', '1,2'],
      ]).filters,
    ).toEqual([]);
  });

  it('when format, limit, offset, username and api_key are given, then none becomes a filter', () => {
    const q = users([
      ['format', 'json'],
      ['limit', '5'],
      ['offset', '10'],
      ['username', 'root'],
      ['api_key', 'k'],
    ]);
    expect(q.filters).toEqual([]);
    expect(q.limit).toBe(5);
    expect(q.offset).toBe(10n);
  });

  it('when several filters are given, then each is returned', () => {
    const q = users([
      ['user__startswith', 'a'],
      ['enabled', 'false'],
      ['cluster', '2'],
    ]);
    expect(q.filters).toEqual([
      { alias: 'u', column: 'username', lookup: 'startswith', values: ['a'] },
      { alias: 'u', column: 'enabled', lookup: 'exact', values: [false] },
      { alias: 'u', column: 'cluster_id', lookup: 'exact', values: ['2'] },
    ]);
  });

  it('when no parameters are given, then there are no filters, no ordering, limit 20 and offset 0', () => {
    expect(users([])).toEqual({ filters: [], ordering: [], limit: 20, offset: 0n });
  });
});

describe('filters on clusters', () => {
  it('when id=abc, then it is a mismatched type', () => {
    expect(messageOf(() => clusters([['id', 'abc']]))).toBe(MISMATCHED);
  });

  it('when id=2147483648 (past int4), then it is a mismatched type', () => {
    expect(messageOf(() => clusters([['id', '2147483648']]))).toBe(MISMATCHED);
  });

  it('when id__in=1,2, then the values are decimal strings', () => {
    expect(clusters([['id__in', '1,2']]).filters).toEqual([
      { alias: 'k', column: 'id', lookup: 'in', values: ['1', '2'] },
    ]);
  });

  it('when name__icontains=test, then it filters the name column', () => {
    expect(clusters([['name__icontains', 'test']]).filters).toEqual([
      { alias: 'k', column: 'name', lookup: 'icontains', values: ['test'] },
    ]);
  });

  it('when auth_url=x (a field without filtering), then it does not allow filtering', () => {
    expect(messageOf(() => clusters([['auth_url', 'x']]))).toBe("The 'auth_url' field does not allow filtering.");
  });
});

describe('ordering', () => {
  it("when order_by names an unknown field, then it is refused with tastypie's message", () => {
    expect(messageOf(() => users([['order_by', 'x']]))).toBe("No matching 'x' field for ordering on.");
  });

  it('when order_by=-user, then ordering is username descending', () => {
    expect(users([['order_by', '-user']]).ordering).toEqual([{ alias: 'u', column: 'username', desc: true }]);
  });

  it('when order_by is repeated, then orderings are kept in order', () => {
    expect(
      users([
        ['order_by', 'enabled'],
        ['order_by', '-id'],
      ]).ordering,
    ).toEqual([
      { alias: 'u', column: 'enabled', desc: false },
      { alias: 'u', column: 'id', desc: true },
    ]);
  });

  it('when order_by names a field that cannot be ordered, then it is refused', () => {
    expect(messageOf(() => users([['order_by', 'password']]))).toBe("The 'password' field does not allow ordering.");
  });

  it('when order_by is given, then it is not treated as a filter', () => {
    expect(users([['order_by', 'user']]).filters).toEqual([]);
  });
});

describe('limit', () => {
  it('when no limit is given, then it is 20', () => {
    expect(parseLimit(undefined, DEFAULT_LIMIT, MAX_LIMIT)).toBe(20);
  });

  it.each([
    ['5', 5],
    ['1000', 1000],
    ['0', 1000],
    ['1001', 1000],
    ['5000', 1000],
    ['1000000000000000000000000', 1000],
  ])('when limit=%s, then it is %i', (raw, expected) => {
    expect(parseLimit(raw, DEFAULT_LIMIT, MAX_LIMIT)).toBe(expected);
  });

  it('when limit=-1, then it is refused asking for >= 0', () => {
    expect(messageOf(() => parseLimit('-1', DEFAULT_LIMIT, MAX_LIMIT))).toBe(
      "Invalid limit '-1' provided. Please provide a positive integer >= 0.",
    );
  });

  it.each(['abc', '1.5', '', '0x10'])('when limit=%p, then it is refused asking for a positive integer', (raw) => {
    expect(messageOf(() => parseLimit(raw, DEFAULT_LIMIT, MAX_LIMIT))).toBe(
      `Invalid limit '${raw}' provided. Please provide a positive integer.`,
    );
  });

  it('when limit is repeated in the query, then the last one counts', () => {
    expect(
      users([
        ['limit', '5'],
        ['limit', '7'],
      ]).limit,
    ).toBe(7);
  });

  it('when limit=0 in the query, then the list limit is 1000', () => {
    expect(users([['limit', '0']]).limit).toBe(1000);
  });

  it('when limit echoes markup, then it is HTML-escaped in the message', () => {
    expect(messageOf(() => parseLimit('<script>', DEFAULT_LIMIT, MAX_LIMIT))).toBe(
      "Invalid limit '&lt;script&gt;' provided. Please provide a positive integer.",
    );
  });
});

describe('offset', () => {
  it('when no offset is given, then it is 0', () => {
    expect(parseOffset(undefined)).toBe(0n);
  });

  it('when offset=40, then it is 40n', () => {
    expect(parseOffset('40')).toBe(40n);
  });

  it('when offset=-5, then it is refused asking for >= 0', () => {
    expect(messageOf(() => parseOffset('-5'))).toBe(
      "Invalid offset '-5' provided. Please provide a positive integer >= 0.",
    );
  });

  it('when offset=x, then it is refused asking for an integer', () => {
    expect(messageOf(() => parseOffset('x'))).toBe("Invalid offset 'x' provided. Please provide an integer.");
  });

  it('when offset is 10^30, then it is accepted exactly as a bigint', () => {
    expect(parseOffset('1000000000000000000000000000000')).toBe(10n ** 30n);
    expect(users([['offset', '1000000000000000000000000000000']]).offset).toBe(10n ** 30n);
  });

  it('when offset echoes markup, then it is HTML-escaped in the message', () => {
    expect(messageOf(() => parseOffset('<b>&'))).toBe(
      "Invalid offset '&lt;b&gt;&amp;' provided. Please provide an integer.",
    );
  });
});

describe('filter values the column could not hold', () => {
  it.each([
    'abc',
    '',
    '6ba7b810-9dad-11d1-80b4-00c04fd430c',
    '6ba7b810-9dad-11d1-80b4-00c04fd430c8x',
    '{6ba7b810-9dad-11d1-80b4-00c04fd430c8',
    'g'.repeat(32),
  ])('when uuid=%j, then 400 names the filter and says it takes a UUID', (value) => {
    expect(messageOf(() => clusters([['uuid', value]]))).toBe(
      "The 'uuid' filter takes a UUID, like 6ba7b810-9dad-11d1-80b4-00c04fd430c8.",
    );
  });

  it.each([
    '6ba7b810-9dad-11d1-80b4-00c04fd430c8',
    '6BA7B8109DAD11D180B400C04FD430C8',
    '{6ba7b810-9dad-11d1-80b4-00c04fd430c8}',
    '6ba7-b810-9dad-11d1-80b4-00c0-4fd4-30c8',
  ])('when uuid=%s (a spelling Postgres reads), then it is a filter value as given', (value) => {
    expect(clusters([['uuid', value]]).filters).toEqual([
      { alias: 'k', column: 'uuid', lookup: 'exact', values: [value] },
    ]);
  });

  it('when a chained uuid filter or one of an in list is not a UUID, then the message names the filter as sent', () => {
    expect(messageOf(() => users([['cluster__uuid', 'x']]))).toBe(
      "The 'cluster__uuid' filter takes a UUID, like 6ba7b810-9dad-11d1-80b4-00c04fd430c8.",
    );
    expect(messageOf(() => clusters([['uuid__in', '6ba7b810-9dad-11d1-80b4-00c04fd430c8,x']]))).toBe(
      "The 'uuid__in' filter takes UUIDs separated by commas, each like 6ba7b810-9dad-11d1-80b4-00c04fd430c8.",
    );
  });

  it.each(['\u0000', 'a\u0000b', '\t', '\n', '\u001b', '\u007f', '\u0085', '\u009f'])(
    'when a text filter holds the control character %j, then 400 names the filter',
    (value) => {
      expect(messageOf(() => users([['user', value]]))).toBe(
        "The 'user' filter takes text without control characters.",
      );
      expect(messageOf(() => users([['user__in', `alice,${value}`]]))).toBe(
        "The 'user__in' filter takes text without control characters.",
      );
      expect(messageOf(() => users([['cluster__name__startswith', value]]))).toBe(
        "The 'cluster__name__startswith' filter takes text without control characters.",
      );
    },
  );

  it('when a text filter holds other characters (spaces, Latin-1, emoji), then it is a value as given', () => {
    expect(users([['user', 'a b é \u00a0 🎉']]).filters[0]!.values).toEqual(['a b é \u00a0 🎉']);
  });
});

describe('echoed values are HTML-escaped', () => {
  it('when order_by names <script>, then the message shows it escaped', () => {
    expect(messageOf(() => users([['order_by', '<script>']]))).toBe(
      "No matching '&lt;script&gt;' field for ordering on.",
    );
  });

  it('when a lookup is <script>, then the message shows it escaped', () => {
    expect(messageOf(() => users([['user__<script>', 'x']]))).toBe(
      "'&lt;script&gt;' is not an allowed filter on the 'user' field.",
    );
  });

  it('when an ordering or lookup name is long, then the message shows only its first 64 characters', () => {
    const long = 'z'.repeat(300);
    expect(messageOf(() => users([['order_by', long]]))).toBe(
      `No matching '${'z'.repeat(64)}…' field for ordering on.`,
    );
    expect(messageOf(() => users([[`user__${long}`, 'x']]))).toBe(
      `'${'z'.repeat(64)}…' is not an allowed filter on the 'user' field.`,
    );
  });
});

describe('queryPairs', () => {
  it('when the URL has no query string, then there are no pairs', () => {
    expect(queryPairs('/api/v1/users/')).toEqual([]);
  });

  it('when keys repeat, then pairs keep their original order and repeats', () => {
    expect(queryPairs('/api/v1/users/?b=2&a=1&b=3')).toEqual([
      ['b', '2'],
      ['a', '1'],
      ['b', '3'],
    ]);
  });

  it('when values are form-encoded, then they are decoded (+ is a space, %2C a comma)', () => {
    expect(queryPairs('/api/v1/users/?user=a+b&cluster__in=1%2C3&cluster=%2Fapi%2Fv1%2Fclusters%2F1%2F')).toEqual([
      ['user', 'a b'],
      ['cluster__in', '1,3'],
      ['cluster', '/api/v1/clusters/1/'],
    ]);
  });
});
