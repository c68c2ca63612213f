import { ConfigError } from '@cairn/config';
import { readConfig } from '../src/config';
import { parseRedisUrl, RedisUrlError } from '../src/redis';

const problemsOf = (url: string): string[] => {
  try {
    readConfig({ REDIS_URL: url });
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
};

describe('REDIS_URL forms', () => {
  it('when a single-server URL is given, then it is handed to ioredis unchanged', () => {
    for (const url of ['redis://127.0.0.1:6379', 'rediss://user:pw@redis.example.com:6380/2', 'redis://redis']) {
      expect(parseRedisUrl(url)).toEqual({ kind: 'single', url });
    }
  });

  it('when redis+cluster:// lists seed nodes, then each node with its port (6379 by default) and the credentials, decoded', () => {
    expect(parseRedisUrl('redis+cluster://app:p%40ss%3Aw@10.0.0.1:7000,redis-2,[::1]:7002')).toEqual({
      kind: 'cluster',
      tls: false,
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: 'redis-2', port: 6379 },
        { host: '::1', port: 7002 },
      ],
      username: 'app',
      password: 'p@ss:w',
    });
    expect(parseRedisUrl('rediss+cluster://:secret@a.example.com:7000/')).toMatchObject({
      kind: 'cluster',
      tls: true,
      password: 'secret',
    });
  });

  it('when redis+sentinel:// names sentinels and a master, then sentinels (26379 by default), master, db and sentinel credentials', () => {
    expect(
      parseRedisUrl('redis+sentinel://:datapw@s1,s2:26380/mymaster/3?sentinel_username=watch&sentinel_password=sp'),
    ).toEqual({
      kind: 'sentinel',
      tls: false,
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26380 },
      ],
      name: 'mymaster',
      db: 3,
      password: 'datapw',
      sentinelUsername: 'watch',
      sentinelPassword: 'sp',
    });
    expect(parseRedisUrl('REDISS+SENTINEL://s1/cairn')).toMatchObject({
      kind: 'sentinel',
      tls: true,
      name: 'cairn',
      db: 0,
    });
  });

  it.each([
    ['http://user:hunter2@redis', /scheme must be one of/],
    ['redis+sentinel://hunter2@s1:26379,s2:26379', /needs the master name/],
    ['redis+sentinel://s1/my master', /master name may only hold/],
    ['redis+sentinel://s1/mymaster/x', /database number/],
    ['redis+sentinel://s1/mymaster?password=hunter2', /query parameter password is not supported/],
    ['redis+cluster://a:7000,,b:7001', /host in the list is empty/],
    ['redis+cluster://a:70000', /port is not a number from 1 to 65535/],
    ['redis+cluster://a:7000/1', /only database 0/],
    ['redis+cluster://a:7000?hunter2', /a query parameter is not supported/],
    ['redis+cluster://a b:7000', /not a valid hostname/],
    ['redis+cluster://[::1:7000', /not closed/],
    ['redis+cluster://user:hunter2@', /names no cluster node/],
    ['redis+cluster://a#hunter2', /fragment/],
    ['redis://redis:6379/notadb', /database number/],
  ])('when REDIS_URL is %s, then config refuses it with a reason and without echoing it', (url, reason) => {
    expect(() => parseRedisUrl(url)).toThrow(RedisUrlError);
    const problems = problemsOf(url);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^REDIS_URL=\(secret\): is not a usable Redis URL: /);
    expect(problems[0]).toMatch(reason);
    expect(problems[0]).not.toContain('hunter2');
  });

  it('when a Cluster or Sentinel URL is well formed, then config accepts it as is', () => {
    const url = 'redis+sentinel://s1:26379,s2:26379/mymaster';
    expect(readConfig({ REDIS_URL: url }).redisUrl).toBe(url);
    expect(readConfig({ REDIS_URL: 'redis+cluster://127.0.0.1:7101,127.0.0.1:7102' }).redisUrl).toBe(
      'redis+cluster://127.0.0.1:7101,127.0.0.1:7102',
    );
  });
});
