import { ConfigError } from '@cairn/config';
import { readConfig } from '../src/config';
import { addressUnit } from '../src/credentials/logins';

function problemsOf(env: Record<string, string>): string[] {
  try {
    readConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  throw new Error('readConfig accepted the environment');
}

describe('login limit settings', () => {
  it('when nothing is set, then 10 failures per username and address and 100 per address, each per 300 s, 100 per username from unknown addresses per hour, addresses known for 30 days, and no proxy trusted', () => {
    const config = readConfig({});
    expect([
      config.failureLimit,
      config.failureWindow,
      config.addressFailureLimit,
      config.addressFailureWindow,
    ]).toEqual([10, 300, 100, 300]);
    expect([config.userFailureLimit, config.userFailureWindow, config.knownAddressDays]).toEqual([100, 3600, 30]);
    expect(config.trustProxy).toBe(false);
  });

  it('when the per-username limit, its window and the known-address days are set, then they are read; out-of-range values name their variable', () => {
    const config = readConfig({
      CAIRN_LOGIN_USER_FAILURE_LIMIT: '50',
      CAIRN_LOGIN_USER_FAILURE_WINDOW: '86400',
      CAIRN_LOGIN_KNOWN_ADDRESS_DAYS: '7',
    });
    expect([config.userFailureLimit, config.userFailureWindow, config.knownAddressDays]).toEqual([50, 86400, 7]);
    expect(problemsOf({ CAIRN_LOGIN_USER_FAILURE_LIMIT: '0' })[0]).toContain('CAIRN_LOGIN_USER_FAILURE_LIMIT="0"');
    expect(problemsOf({ CAIRN_LOGIN_USER_FAILURE_WINDOW: '1h' })[0]).toContain('CAIRN_LOGIN_USER_FAILURE_WINDOW="1h"');
    expect(problemsOf({ CAIRN_LOGIN_KNOWN_ADDRESS_DAYS: '0' })[0]).toContain('CAIRN_LOGIN_KNOWN_ADDRESS_DAYS="0"');
  });

  it('when the address limit and window are set, then they are read; out-of-range values name their variable', () => {
    const config = readConfig({ CAIRN_LOGIN_ADDRESS_FAILURE_LIMIT: '500', CAIRN_LOGIN_ADDRESS_FAILURE_WINDOW: '60' });
    expect([config.addressFailureLimit, config.addressFailureWindow]).toEqual([500, 60]);
    expect(problemsOf({ CAIRN_LOGIN_ADDRESS_FAILURE_LIMIT: '0' })[0]).toContain(
      'CAIRN_LOGIN_ADDRESS_FAILURE_LIMIT="0"',
    );
    expect(problemsOf({ CAIRN_LOGIN_ADDRESS_FAILURE_WINDOW: 'soon' })[0]).toContain(
      'CAIRN_LOGIN_ADDRESS_FAILURE_WINDOW="soon"',
    );
  });

  it.each([
    ['false', false],
    ['2', 2],
    ['10.0.0.7', ['10.0.0.7']],
    ['10.0.0.0/8, 192.168.1.1 ,loopback', ['10.0.0.0/8', '192.168.1.1', 'loopback']],
    ['fd00::/8,::1', ['fd00::/8', '::1']],
  ])('when CAIRN_TRUST_PROXY is %s, then express gets %p', (value, expected) => {
    expect(readConfig({ CAIRN_TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it.each(['true', 'TRUE', '0', '1.5', 'lb.example.com', '10.0.0.0/33', '10.0.0.1/8/1', ',', '*'])(
    'when CAIRN_TRUST_PROXY is %s, then start-up refuses it with a message that names the variable',
    (value) => {
      const problems = problemsOf({ CAIRN_TRUST_PROXY: value });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain('CAIRN_TRUST_PROXY=');
    },
  );

  it("when CAIRN_TRUST_PROXY is 'true', then the message says why trusting everyone is refused", () => {
    expect(problemsOf({ CAIRN_TRUST_PROXY: 'true' })[0]).toContain('every client could then choose its own address');
  });
});

describe('the unit an address limit counts', () => {
  it.each([
    ['203.0.113.9', '203.0.113.9'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['::FFFF:127.0.0.1', '127.0.0.1'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff::9', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
    ['1:2:3::4:5:6.7.8.9', '1:2:3:0::/64'],
  ])('when the client is %s, then it counts as %s', (address, unit) => {
    expect(addressUnit(address)).toBe(unit);
  });

  it('when two addresses share a /64, then they share a count; addresses in neighbouring /64s do not', () => {
    expect(addressUnit('2001:db8:a:b::1')).toBe(addressUnit('2001:db8:a:b:ffff:ffff:ffff:ffff'));
    expect(addressUnit('2001:db8:a:b::1')).not.toBe(addressUnit('2001:db8:a:c::1'));
  });
});
