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

  it('when an application credential login or create body is logged, as the request or on its own, then its secret is written as [redacted]', () => {
    const out = new LogCapture();
    const log = createLogger('info', out);
    const login = (secret: string) => ({
      auth: { identity: { methods: ['application_credential'], application_credential: { id: 'c1', secret } } },
    });
    const create = (secret: string) => ({ application_credential: { name: 'backup', secret } });
    log.info({ req: { body: login('s1-login-secret') } }, 'login as the request');
    log.info({ body: login('s2-login-secret') }, 'login on its own');
    log.info({ req: { body: create('s3-create-secret') } }, 'create as the request');
    log.info({ body: create('s4-create-secret') }, 'create on its own');
    expect(out.lines).toHaveLength(4);
    expect(out.text).not.toMatch(/s\d-(login|create)-secret/);
    expect(out.text.match(/\[redacted\]/g)).toHaveLength(4);
    // Only the secret: the credential's id and name stay readable.
    expect(out.text).toContain('"id":"c1"');
    expect(out.text).toContain('"name":"backup"');
  });

  it('when the level is silent, then nothing is written', () => {
    const out = new LogCapture();
    createLogger('silent', out).error({ password: 'x' }, 'hidden');
    expect(out.lines).toEqual([]);
  });
});
