import { hashPassword } from '@cairn/domain';
import { PasswordVerifier } from '../src/credentials/verifier';
import type { UserRecord } from '../src/credentials/users';

const PARAMS = { logN: 10, r: 8, p: 1 };

describe('PasswordVerifier', () => {
  let alice: UserRecord;
  beforeAll(async () => {
    alice = { id: '1', username: 'alice', passwordHash: await hashPassword('right-password-right-pw', PARAMS), enabled: true, isSuperuser: false, generation: '1' };
  });

  it('when many identical checks run at once, then each gets the right answer', async () => {
    const verifier = new PasswordVerifier(60);
    const right = await Promise.all(Array.from({ length: 8 }, () => verifier.check('alice', alice, 'right-password-right-pw')));
    const wrong = await Promise.all(Array.from({ length: 8 }, () => verifier.check('alice', alice, 'wrong-password-wrong-pw')));
    const unknown = await Promise.all(Array.from({ length: 8 }, () => verifier.check('nobody', null, 'right-password-right-pw')));
    expect(right).toEqual(Array(8).fill(true));
    expect(wrong).toEqual(Array(8).fill(false));
    expect(unknown).toEqual(Array(8).fill(false));
  });

  it('when asked whether it remembers a password, then only one it verified as right, still within its time, for the same enabled credential', async () => {
    let now = 1_000;
    const verifier = new PasswordVerifier(60, () => now);
    expect(verifier.remembers('alice', alice, 'right-password-right-pw')).toBe(false);
    expect(await verifier.check('alice', alice, 'wrong-password-wrong-pw')).toBe(false);
    expect(verifier.remembers('alice', alice, 'wrong-password-wrong-pw')).toBe(false);
    expect(await verifier.check('alice', alice, 'right-password-right-pw')).toBe(true);
    expect(verifier.remembers('alice', alice, 'right-password-right-pw')).toBe(true);
    expect(verifier.remembers('alice', { ...alice, enabled: false }, 'right-password-right-pw')).toBe(false);
    expect(verifier.remembers('alice', { ...alice, generation: '2' }, 'right-password-right-pw')).toBe(false);
    expect(verifier.remembers('alice', null, 'right-password-right-pw')).toBe(false);
    now += 61_000;
    expect(verifier.remembers('alice', alice, 'right-password-right-pw')).toBe(false);
  });

  it('when the user is disabled, then even the right password fails, also after a cached success', async () => {
    const verifier = new PasswordVerifier(60);
    expect(await verifier.check('alice', alice, 'right-password-right-pw')).toBe(true);
    expect(await verifier.check('alice', { ...alice, enabled: false }, 'right-password-right-pw')).toBe(false);
  });

  it('when the generation changes, then a remembered success no longer applies', async () => {
    let now = 1_000;
    const verifier = new PasswordVerifier(60, () => now);
    expect(await verifier.check('alice', alice, 'right-password-right-pw')).toBe(true);
    const changed = { ...alice, generation: '2', passwordHash: await hashPassword('a-new-password-of-20-chars', PARAMS) };
    expect(await verifier.check('alice', changed, 'right-password-right-pw')).toBe(false);
    now += 61_000;
    expect(await verifier.check('alice', alice, 'right-password-right-pw')).toBe(true);
  });

  it('when a user is deleted and re-created with the same name and generation but another password, then the old password is refused at once', async () => {
    const verifier = new PasswordVerifier(60);
    expect(await verifier.check('alice', alice, 'right-password-right-pw')).toBe(true);
    // A new row (new id) with generation 1 again and a new hash: nothing of the old one may match.
    const recreated = { ...alice, id: '2', passwordHash: await hashPassword('a-new-password-of-20-chars', PARAMS) };
    expect(await verifier.check('alice', recreated, 'right-password-right-pw')).toBe(false);
    expect(await verifier.check('alice', recreated, 'a-new-password-of-20-chars')).toBe(true);
  });

  it.each([
    ['a new row id with the same hash', { id: '2' }, false],
    ['a new hash (new salt) on the same row id', {}, true],
  ])('when only the credential changes (%s), then a remembered success does not apply: the check runs again', async (_, change: Partial<UserRecord>, rehash: boolean) => {
    // Same password, new salt: the check must run again (and pass), not be taken from memory.
    const rehashed = rehash ? { passwordHash: await hashPassword('right-password-right-pw', PARAMS) } : {};
    const runs: number[] = [];
    const counting = new PasswordVerifier(60, Date.now, (s) => runs.push(s));
    expect(await counting.check('alice', alice, 'right-password-right-pw')).toBe(true);
    expect(await counting.check('alice', alice, 'right-password-right-pw')).toBe(true);
    expect(runs).toHaveLength(1);
    expect(await counting.check('alice', { ...alice, ...change, ...rehashed }, 'right-password-right-pw')).toBe(true);
    expect(runs).toHaveLength(2);
  });
});
