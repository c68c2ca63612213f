import { createLogger } from '../src';
import { LogCapture } from '@cairn/runtime';

describe('the gateway logger', () => {
  it('when secrets are logged in any known place, then they are written as [redacted]', () => {
    const out = new LogCapture();
    const log = createLogger('info', out);
    log.info(
      {
        req: {
          headers: {
            authorization: 's1',
            'x-auth-key': 's2',
            'x-auth-token': 's3',
            'x-subject-token': 's4',
            'x-storage-pass': 's5',
            'x-storage-token': 's6',
          },
          body: {
            auth: { passwordCredentials: { password: 's7' }, identity: { password: { user: { password: 's8' } } } },
          },
        },
        res: { headers: { 'x-auth-token': 's9', 'x-subject-token': 's10' } },
        password: 's11',
        user: { password: 's12' },
        config: { databaseUrl: 'postgres://u:s13@db/x', redisUrl: 'redis://:s14@r' },
      },
      'everything',
    );
    expect(out.lines).toHaveLength(1);
    expect(out.text).not.toMatch(/"s\d+|:s\d+@/);
    expect(out.text.match(/\[redacted\]/g)).toHaveLength(14);
  });

  it('when proxy credentials, signing keys or password hashes are logged, then they are written as [redacted]', () => {
    const out = new LogCapture();
    createLogger('info', out).info(
      {
        req: { headers: { 'proxy-authorization': 's1', 'x-service-token': 's2' } },
        signingKey: 's3',
        config: { signingKey: 's4' },
        user: { passwordHash: 's5' },
      },
      'more',
    );
    expect(out.text).not.toMatch(/"s\d+"/);
    expect(out.text.match(/\[redacted\]/g)).toHaveLength(5);
  });

  it('when the level is silent, then nothing is written', () => {
    const out = new LogCapture();
    createLogger('silent', out).error({ password: 'x' }, 'hidden');
    expect(out.lines).toEqual([]);
  });
});
