import Joi from 'joi';
import { ConfigError, loadConfig, type ConfigSpec } from '../src';

const spec: ConfigSpec = {
  port: { env: 'PORT', doc: 'listen port', schema: Joi.number().integer().min(0).max(65535).default(8000) },
  url: { env: 'DB_URL', doc: 'database', schema: Joi.string().uri(), secret: true },
  level: { env: 'LEVEL', doc: 'log level', schema: Joi.string().valid('info', 'debug').default('info') },
};
const noFiles = (p: string): string => {
  throw Object.assign(new Error(p), { code: 'ENOENT' });
};

describe('loadConfig', () => {
  it('when nothing is set, then every default applies', () => {
    expect(loadConfig(spec, {}, noFiles)).toEqual({ port: 8000, level: 'info' });
  });

  it('when values are set, then they are converted', () => {
    expect(loadConfig(spec, { PORT: '9000', DB_URL: 'postgres://x/y' }, noFiles)).toEqual({
      port: 9000,
      url: 'postgres://x/y',
      level: 'info',
    });
  });

  it('when a secret comes from a _FILE, then the file content without its final newline is used', () => {
    const read = (p: string) => (p === '/run/secrets/db' ? 'postgres://a/b\n' : noFiles(p));
    expect(loadConfig<{ url: string }>(spec, { DB_URL_FILE: '/run/secrets/db' }, read).url).toBe('postgres://a/b');
  });

  it('when several values are wrong, then all are reported together and secrets are not echoed', () => {
    let caught: unknown;
    try {
      loadConfig(spec, { PORT: 'x', LEVEL: 'loud', DB_URL: 'not a url' }, noFiles);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const problems = (caught as ConfigError).problems;
    expect(problems).toHaveLength(3);
    expect(problems.join('\n')).toContain('PORT="x"');
    expect(problems.join('\n')).toContain('LEVEL="loud"');
    expect(problems.join('\n')).not.toContain('not a url');
  });

  it('when a secret file cannot be read, then the variable and path are named', () => {
    expect(() => loadConfig(spec, { DB_URL_FILE: '/nope' }, noFiles)).toThrow(
      /DB_URL_FILE: cannot read \/nope \(ENOENT\)/,
    );
  });
});
