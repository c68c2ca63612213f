import { CairnError } from '@cairn/domain';
import { CONTENT_TYPES, negotiateFormat } from '../../src/http/negotiate';

function refusal(formatParam: unknown, accept: string | undefined): CairnError {
  try {
    negotiateFormat(formatParam, accept);
  } catch (e) {
    if (e instanceof CairnError) return e;
    throw e;
  }
  throw new Error(`expected Accept ${JSON.stringify(accept)} to be refused`);
}

describe('format negotiation', () => {
  it('when format=xml is given, then it wins over an Accept for JSON', () => {
    expect(negotiateFormat('xml', 'application/json')).toBe('xml');
  });

  it('when format=json is given, then it wins over an Accept for XML', () => {
    expect(negotiateFormat('json', 'application/xml')).toBe('json');
  });

  it('when format is given, then even a malformed Accept header is not consulted', () => {
    expect(negotiateFormat('xml', 'garbage')).toBe('xml');
  });

  it.each([
    ['yaml', 'application/xml', 'xml'],
    ['XML', 'application/xml', 'xml'],
    ['', 'application/xml', 'xml'],
    ['jsonp', undefined, 'json'],
  ])('when format=%p (unknown) and Accept is %p, then it falls through to %p', (format, accept, expected) => {
    expect(negotiateFormat(format, accept)).toBe(expected);
  });

  it('when format is repeated (an array from the query parser), then it is ignored and Accept decides', () => {
    expect(negotiateFormat(['xml', 'json'], 'application/xml')).toBe('xml');
    expect(negotiateFormat(['xml', 'json'], undefined)).toBe('json');
  });

  it.each([
    ['application/xml', 'xml'],
    ['text/xml', 'xml'],
    ['application/json', 'json'],
    ['Application/XML', 'xml'],
    ['application/xml; charset=utf-8', 'xml'],
    ['*/*', 'json'],
    ['text/html', 'json'],
    ['application/*', 'json'],
    ['text/html, application/xhtml+xml, */*', 'json'],
  ])('when Accept is %p, then the format is %p', (accept, expected) => {
    expect(negotiateFormat(undefined, accept)).toBe(expected);
  });

  it('when Accept is missing or blank, then the format is JSON', () => {
    expect(negotiateFormat(undefined, undefined)).toBe('json');
    expect(negotiateFormat(undefined, '')).toBe('json');
    expect(negotiateFormat(undefined, '   ')).toBe('json');
  });

  it.each([
    ['application/json;q=0.5, application/xml;q=0.9', 'xml'],
    ['application/xml;q=0.5, application/json;q=0.9', 'json'],
    ['application/xml;q=0.1, application/json', 'json'],
    ['text/html, application/xml;q=0.9, */*;q=0.8', 'xml'],
    ['application/xml;q=0, application/json;q=0.1', 'json'],
    ['application/xml;q=0', 'json'],
    ['application/json ; q=0.2 , text/xml ; q=0.3', 'xml'],
  ])('when Accept is %p, then q-values pick %p', (accept, expected) => {
    expect(negotiateFormat(undefined, accept)).toBe(expected);
  });

  it.each([
    'garbage',
    'application/json;q=abc',
    'application/json;q=2',
    'application/json;q=-1',
    'application/',
    '/json',
    'text /xml',
  ])("when Accept is %p (malformed), then it is refused with 'Invalid Accept header'", (accept) => {
    const error = refusal(undefined, accept);
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toBe('Invalid Accept header');
  });

  it('when content types are looked up, then JSON is bare and XML declares utf-8', () => {
    expect(CONTENT_TYPES).toEqual({ json: 'application/json', xml: 'application/xml; charset=utf-8' });
  });
});
