import { usersOf } from '../../src/lib/acl-users';

describe('user names typed for a container ACL', () => {
  it('when names are separated by commas, new lines and spaces, then each is one entry, trimmed', () => {
    expect(usersOf(' bob, carol\ndave ,\n')).toEqual(['bob', 'carol', 'dave']);
  });

  it('when a name is typed twice or nothing is typed, then it is listed once, or the list is empty', () => {
    expect(usersOf('bob,bob, bob')).toEqual(['bob']);
    expect(usersOf(' , \n ')).toEqual([]);
  });

  it('when a name holds spaces inside, then they are kept (Cairn user names may)', () => {
    expect(usersOf('ann lee, bob')).toEqual(['ann lee', 'bob']);
  });
});
