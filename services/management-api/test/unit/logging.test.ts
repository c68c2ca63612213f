import { LogCapture } from '@cairn/runtime';
import { createLogger } from '../../src/deps';

describe('the management API logger', () => {
  it('when secrets are logged in any known place, then they are written as [redacted]', () => {
    const out = new LogCapture();
    createLogger('info', out).info(
      {
        req: {
          headers: {
            authorization: 's1',
            'x-auth-key': 's2',
            'x-auth-token': 's3',
            'x-subject-token': 's4',
            'x-storage-pass': 's5',
            'x-storage-token': 's6',
            'x-service-token': 's7',
            'proxy-authorization': 's8',
            cookie: 's9',
          },
        },
        res: { headers: { 'x-auth-token': 's10', 'x-subject-token': 's11', 'x-storage-token': 's12' } },
        password: 's13',
        user: { password: 's14', password_hash: 's15' },
        operator: { api_key: 's16', key: 's17', key_hash: 's18' },
        config: { databaseUrl: 'postgres://u:s19@db/x', adminKey: 's20' },
      },
      'everything',
    );
    expect(out.lines).toHaveLength(1);
    expect(out.text).not.toMatch(/"s\d+"|:s\d+@/);
    expect(out.text.match(/\[redacted\]/g)).toHaveLength(20);
  });

  it('when ordinary fields are logged, then they are kept', () => {
    const out = new LogCapture();
    createLogger('info', out).info({ user: 'alice', cluster: 'default' }, 'ordinary');
    expect(JSON.parse(out.lines[0]!)).toMatchObject({ user: 'alice', cluster: 'default', service: 'management-api' });
  });
});
