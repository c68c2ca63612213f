import { parseApplicationCredentialNotice, parseClusterChangeNotice, parseUserChangeNotice } from '../src';

describe('change notice payloads', () => {
  it('when a user notice names one user, then it parses to that user of that cluster', () => {
    expect(parseUserChangeNotice('{"cluster_id": 3, "user": "alice"}')).toEqual({ cluster_id: 3, user: 'alice' });
  });

  it('when a user notice says all, then it parses to every user of that cluster', () => {
    expect(parseUserChangeNotice('{"cluster_id": 3, "all": true}')).toEqual({ cluster_id: 3, all: true });
  });

  it('when a user notice is not JSON, not an object or has no numeric cluster_id, then it is unreadable (null)', () => {
    for (const payload of [
      undefined,
      '',
      'alice',
      '[1]',
      'null',
      '{"user": "alice"}',
      '{"cluster_id": "3", "user": "alice"}',
    ]) {
      expect(parseUserChangeNotice(payload)).toBeNull();
    }
  });

  it('when a cluster notice names an id, then it parses to it; otherwise it is unreadable (null)', () => {
    expect(parseClusterChangeNotice('{"id": 7}')).toEqual({ id: 7 });
    for (const payload of [undefined, '', '7', '{"id": "7"}', '{}'])
      expect(parseClusterChangeNotice(payload)).toBeNull();
  });

  it('when an application credential notice names an id, then it parses to it; "all" and anything else is unreadable (null: forget every credential)', () => {
    expect(parseApplicationCredentialNotice('{"id": "0123456789abcdef0123456789abcdef"}')).toEqual({
      id: '0123456789abcdef0123456789abcdef',
    });
    for (const payload of [undefined, '', '{"all": true}', '{"id": 7}', '[]'])
      expect(parseApplicationCredentialNotice(payload)).toBeNull();
  });
});
