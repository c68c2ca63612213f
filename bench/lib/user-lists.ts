/**
 * The users-list scenarios of the management API benchmark (bench/management-api.bench.ts), shared
 * with the EXPLAIN of their statements (bench/explain-users.ts).
 */

/** What a scenario needs to know of the seeded users and clusters. */
export interface SeededUsers {
  clusterIds: number[];
  clusterNames: string[];
  clusterUuids: string[];
  totalUsers: number;
}

/**
 * Every documented filter and lookup of the users list and `order_by` on each orderable field, on
 * page 1 and deep (90 % into what the filter matches), the target: p50 <= 10 ms with an
 * exact total_count. `path` gets the seeded data and a turn number (to vary the cluster or user asked
 * for); `total` is the exact total_count the answer must carry (checked once before loading).
 */
export interface ListScenario {
  key: string;
  label: string;
  path: (s: SeededUsers, turn: number) => string;
  total: (s: SeededUsers) => number;
}

const ORDERABLE = [
  'id',
  '-id',
  'user',
  '-user',
  'cluster',
  '-cluster',
  'enabled',
  '-enabled',
  'is_superuser',
  '-is_superuser',
];
/** 'user0012' matches 10,000 of 1,000,000 seeded names (user00120000..user00129999); 'user0' matches them all. */
const NARROW_PREFIX = 'user0012';

export function listScenarios(users: number, clusters: number): ListScenario[] {
  const perCluster = Math.floor(users / clusters);
  const deepIn = (n: number) => Math.floor(n * 0.9);
  const nth = (s: SeededUsers, turn: number) => s.clusterIds[turn % s.clusterIds.length]!;
  const narrowCount = countPrefix(users, NARROW_PREFIX);
  const both = (
    key: string,
    label: string,
    query: (s: SeededUsers, turn: number) => string,
    total: (s: SeededUsers) => number,
  ): ListScenario[] => [
    { key, label, path: (s, t) => `/api/v1/users/?${query(s, t)}`, total },
    {
      key: `${key}_deep`,
      label: `${label}, deep`,
      path: (s, t) => `/api/v1/users/?${query(s, t)}&offset=${deepIn(total(s))}`,
      total,
    },
  ];
  return [
    ...both(
      'cluster',
      'cluster=<id>',
      (s, t) => `cluster=${nth(s, t)}`,
      () => perCluster,
    ),
    ...both(
      'cluster__id',
      'cluster__id=<id>',
      (s, t) => `cluster__id=${nth(s, t)}`,
      () => perCluster,
    ),
    ...both(
      'cluster__name',
      'cluster__name=<name>',
      (s, t) => `cluster__name=${s.clusterNames[t % s.clusterNames.length]}`,
      () => perCluster,
    ),
    ...both(
      'cluster__uuid',
      'cluster__uuid=<uuid>',
      (s, t) => `cluster__uuid=${s.clusterUuids[t % s.clusterUuids.length]}`,
      () => perCluster,
    ),
    ...both(
      'cluster__in',
      'cluster__in=<id>,<id>',
      (s, t) => `cluster__in=${nth(s, t)},${nth(s, t + 1)}`,
      () => 2 * perCluster,
    ),
    {
      key: 'user',
      label: 'user=<name>',
      path: (s, t) => `/api/v1/users/?user=user${String(1 + ((t * 7919) % users)).padStart(8, '0')}`,
      total: () => 1,
    },
    ...both(
      'user__startswith',
      `user__startswith=${NARROW_PREFIX}`,
      () => `user__startswith=${NARROW_PREFIX}`,
      () => narrowCount,
    ),
    ...both(
      'user__startswith_all',
      'user__startswith=user0 (every user below 10,000,000)',
      () => 'user__startswith=user0',
      () => countPrefix(users, 'user0'),
    ),
    ...ORDERABLE.flatMap((o) =>
      both(
        `order_by=${o}`,
        `order_by=${o}`,
        () => `order_by=${o}`,
        (s) => s.totalUsers,
      ),
    ),
  ];
}

/** How many of the seeded names 'user' || lpad(g, 8, '0'), g = 1..users, start with `prefix`. */
export function countPrefix(users: number, prefix: string): number {
  const digits = prefix.slice('user'.length);
  const free = 8 - digits.length;
  const lo = Number(digits) * 10 ** free;
  const hi = lo + 10 ** free - 1;
  return Math.max(0, Math.min(hi, users) - Math.max(lo, 1) + 1);
}
