import { CairnError, errors, isCairnError } from '../src';

describe('domain errors', () => {
  it('when an invalid-input error is made, then it is a CairnError with code INVALID_INPUT, the message and the details', () => {
    const e = errors.invalidInput('bad', { fields: ['user'] });
    expect(e).toBeInstanceOf(CairnError);
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('CairnError');
    expect(e.code).toBe('INVALID_INPUT');
    expect(e.message).toBe('bad');
    expect(e.details).toEqual({ fields: ['user'] });
  });

  it('when no details are given, then details is an empty object', () => {
    expect(errors.notFound('gone').details).toEqual({});
  });

  it('when method-not-allowed is made, then it lists the allowed methods comma-separated and in details', () => {
    const e = errors.methodNotAllowed(['GET', 'POST']);
    expect(e.code).toBe('METHOD_NOT_ALLOWED');
    expect(e.message).toBe('Method not allowed. Allowed: GET,POST');
    expect(e.details).toEqual({ allowed: ['GET', 'POST'] });
  });

  it('when unauthenticated is made without a message, then it tells how to authenticate', () => {
    const e = errors.unauthenticated();
    expect(e.code).toBe('UNAUTHENTICATED');
    expect(e.message).toContain('ApiKey');
  });

  it.each([
    ['unsupportedMediaType', 'UNSUPPORTED_MEDIA_TYPE'],
    ['payloadTooLarge', 'PAYLOAD_TOO_LARGE'],
    ['forbidden', 'FORBIDDEN'],
    ['notAcceptable', 'NOT_ACCEPTABLE'],
    ['unavailable', 'UNAVAILABLE'],
    ['alreadyExists', 'ALREADY_EXISTS'],
    ['inUse', 'IN_USE'],
    ['conflict', 'CONFLICT'],
  ] as const)('when errors.%s is made, then its code is %s', (factory, code) => {
    expect(errors[factory]('m').code).toBe(code);
  });

  it('when errors.tooManyRequests is made, then its code is TOO_MANY_REQUESTS and it keeps when to retry', () => {
    const e = errors.tooManyRequests('Too many failed logins; retry later.', 42);
    expect(e.code).toBe('TOO_MANY_REQUESTS');
    expect(e.details).toEqual({ retryAfterSeconds: 42 });
  });

  it('when isCairnError is asked about a plain Error or a non-error, then it says no', () => {
    expect(isCairnError(errors.forbidden('x'))).toBe(true);
    expect(isCairnError(new Error('x'))).toBe(false);
    expect(isCairnError({ code: 'INVALID_INPUT', message: 'x' })).toBe(false);
    expect(isCairnError(null)).toBe(false);
  });
});
