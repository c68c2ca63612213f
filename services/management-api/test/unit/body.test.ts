import { Readable } from 'node:stream';
import type { Request } from 'express';
import { CairnError } from '@cairn/domain';
import { parseBody } from '../../src/http/body';
import { operatorsResource } from '../../src/routes/operators';

/** What parseBody reads from an express request: the body as a stream, its headers and the Content-Type. */
function fakeRequest(body: Buffer | string | undefined, contentType?: string): Request {
  const raw = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return Object.assign(Readable.from(raw ? [raw] : []), {
    headers: contentType === undefined ? {} : { 'content-type': contentType },
    get: (name: string) => (name.toLowerCase() === 'content-type' ? contentType : undefined),
  }) as unknown as Request;
}

async function refusal(body: Buffer | string | undefined, contentType?: string): Promise<CairnError> {
  try {
    await parseBody(fakeRequest(body, contentType));
  } catch (e) {
    if (e instanceof CairnError) return e;
    throw e;
  }
  throw new Error('expected the body to be refused');
}

describe('JSON bodies', () => {
  it('when the body is a JSON object, then it is returned as is', async () => {
    const body = { cluster: '/api/v1/clusters/1/', user: 'alice', password: 'p'.repeat(20), enabled: false };
    await expect(parseBody(fakeRequest(JSON.stringify(body), 'application/json'))).resolves.toEqual(body);
  });

  it('when the content type has charset=UTF-8 in any case, then it is accepted', async () => {
    await expect(parseBody(fakeRequest('{"a": 1}', 'Application/JSON; Charset=UTF-8'))).resolves.toEqual({ a: 1 });
  });

  it('when there is no content type, then the body is read as JSON', async () => {
    await expect(parseBody(fakeRequest('{"a": "b"}'))).resolves.toEqual({ a: 'b' });
  });

  it("when the JSON is invalid, then it is refused with 'Request is not valid JSON.'", async () => {
    const error = await refusal('{"user": ', 'application/json');
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toBe('Request is not valid JSON.');
  });

  it.each(['[{"user": "alice"}]', 'null', '"alice"', '42', 'true'])(
    'when the JSON is %s (not an object), then it is refused',
    async (text) => {
      const error = await refusal(text, 'application/json');
      expect(error.code).toBe('INVALID_INPUT');
      expect(error.message).toBe('The request body must be an object of fields.');
    },
  );

  it('when the body bytes are not valid UTF-8, then it is refused as invalid input', async () => {
    const error = await refusal(
      Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      'application/json',
    );
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toContain('UTF-8');
  });

  it('when the body is non-ASCII UTF-8, then it is decoded', async () => {
    await expect(parseBody(fakeRequest('{"user": "jöhn🎉"}', 'application/json'))).resolves.toEqual({ user: 'jöhn🎉' });
  });
});

describe('form bodies', () => {
  it('when the body is form-encoded, then fields are decoded (+ is a space)', async () => {
    await expect(
      parseBody(
        fakeRequest(
          'cluster=%2Fapi%2Fv1%2Fclusters%2F1%2F&user=alice&password=a+long+password+here&enabled=False',
          'application/x-www-form-urlencoded',
        ),
      ),
    ).resolves.toEqual({
      cluster: '/api/v1/clusters/1/',
      user: 'alice',
      password: 'a long password here',
      enabled: 'False',
    });
  });

  it('when a key repeats, then its values become an array in order', async () => {
    await expect(
      parseBody(
        fakeRequest(
          'name=ops&clusters=%2Fapi%2Fv1%2Fclusters%2F1%2F&clusters=2&clusters=3',
          'application/x-www-form-urlencoded',
        ),
      ),
    ).resolves.toEqual({ name: 'ops', clusters: ['/api/v1/clusters/1/', '2', '3'] });
  });

  it('when a list field is given once, then it is a one-element list; other fields stay values', async () => {
    const form = fakeRequest('name=ops&role=reader&clusters=1', 'application/x-www-form-urlencoded');
    await expect(parseBody(form, operatorsResource)).resolves.toEqual({ name: 'ops', role: 'reader', clusters: ['1'] });
    const twice = fakeRequest(
      'name=ops&clusters=1&clusters=%2Fapi%2Fv1%2Fclusters%2F2%2F',
      'application/x-www-form-urlencoded',
    );
    await expect(parseBody(twice, operatorsResource)).resolves.toEqual({
      name: 'ops',
      clusters: ['1', '/api/v1/clusters/2/'],
    });
    // JSON says what is a list itself.
    await expect(parseBody(fakeRequest('{"clusters": "1"}', 'application/json'), operatorsResource)).resolves.toEqual({
      clusters: '1',
    });
  });

  it.each([
    ['{"user": "alice", "password": "secret-secret-secret-secret"}'],
    ['  [1, 2]'],
    ['%7B%22user%22%3A%22alice%22%7D'],
    ['{"password": "a&b=c"}'],
  ])(
    'when a form body is JSON (%s), then it is refused as UNSUPPORTED_MEDIA_TYPE saying to send application/json, echoing nothing',
    async (text) => {
      const error = await refusal(text, 'application/x-www-form-urlencoded');
      expect(error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
      expect(error.message).toContain("'Content-Type: application/json'");
      expect(error.message).not.toMatch(/alice|secret|password/);
    },
  );

  it('when the form is empty, then the result is {}', async () => {
    await expect(parseBody(fakeRequest('', 'application/x-www-form-urlencoded'))).resolves.toEqual({});
  });

  it.each(['toString', 'constructor', 'hasOwnProperty', '__proto__'])(
    'when a form key is named like an Object.prototype member (%s), then it is an ordinary own string field and the prototype is untouched',
    async (key) => {
      const out = await parseBody(fakeRequest(`${key}=x&user=alice`, 'application/x-www-form-urlencoded'));
      expect(Object.getOwnPropertyDescriptor(out, key)?.value).toBe('x');
      expect(Object.getOwnPropertyDescriptor(out, 'user')?.value).toBe('alice');
      expect([Object.prototype, null]).toContain(Object.getPrototypeOf(out));
    },
  );
});

describe('XML bodies', () => {
  it('when the body is tastypie XML, then typed elements become strings, booleans and lists', async () => {
    const xml =
      '<object><user>alice</user><enabled type="boolean">False</enabled>' +
      '<clusters type="list"><value>/api/v1/clusters/1/</value></clusters></object>';
    await expect(parseBody(fakeRequest(xml, 'application/xml'))).resolves.toEqual({
      user: 'alice',
      enabled: false,
      clusters: ['/api/v1/clusters/1/'],
    });
  });

  it('when the XML has a declaration, integers, true booleans, nulls and escaped text, then all are decoded', async () => {
    const xml =
      "<?xml version='1.0' encoding='utf-8'?>\n" +
      '<object><cluster type="integer">2</cluster><is_superuser type="boolean">True</is_superuser>' +
      '<region type="null"/><password>a&amp;b&lt;c&gt;d long enough</password></object>';
    await expect(parseBody(fakeRequest(xml, 'text/xml'))).resolves.toEqual({
      cluster: 2,
      is_superuser: true,
      region: null,
      password: 'a&b<c>d long enough',
    });
  });

  it('when an XML list has several values, then their order is kept', async () => {
    const xml = '<object><clusters type="list"><value>3</value><value>1</value><value>2</value></clusters></object>';
    await expect(parseBody(fakeRequest(xml, 'application/xml'))).resolves.toEqual({ clusters: ['3', '1', '2'] });
  });

  it('when an XML text value has surrounding spaces, then they are kept (a password is not altered)', async () => {
    const xml = '<object><password>  spaced password value  </password></object>';
    await expect(parseBody(fakeRequest(xml, 'application/xml'))).resolves.toEqual({
      password: '  spaced password value  ',
    });
  });

  it('when the XML root is empty, then the result is {}', async () => {
    await expect(parseBody(fakeRequest('<object/>', 'application/xml'))).resolves.toEqual({});
  });

  it.each(['constructor', 'hasOwnProperty', 'toString', 'valueOf', '__proto__'])(
    'when an element is named like a member of every object (%s), then it is an ordinary field and the prototype is untouched',
    async (key) => {
      const out = await parseBody(
        fakeRequest(`<object><${key}>x</${key}><user>alice</user></object>`, 'application/xml'),
      );
      expect(Object.getOwnPropertyDescriptor(out, key)?.value).toBe('x');
      expect(Object.getOwnPropertyDescriptor(out, 'user')?.value).toBe('alice');
      expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
      // Twice is still twice.
      expect((await refusal(`<object><${key}>x</${key}><${key}>y</${key}></object>`, 'application/xml')).message).toBe(
        `The XML element <${key}> appears more than once.`,
      );
    },
  );

  it('when an element named __proto__ holds an object, then it stays a field and gives the result no prototype', async () => {
    const out = await parseBody(
      fakeRequest('<object><__proto__><role>admin</role></__proto__></object>', 'application/xml'),
    );
    expect(Object.keys(out)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect((out as { role?: unknown }).role).toBeUndefined();
  });

  it('when a long element appears twice, then the message shows only the first 64 characters of its name', async () => {
    const tag = `e${'x'.repeat(200)}`;
    expect((await refusal(`<object><${tag}>a</${tag}><${tag}>b</${tag}></object>`, 'application/xml')).message).toBe(
      `The XML element <${tag.slice(0, 64)}…> appears more than once.`,
    );
  });

  it('when an element appears twice, then it is refused naming it', async () => {
    const error = await refusal('<object><user>a</user><user>b</user></object>', 'application/xml');
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toContain('<user>');
  });

  it('when the XML is a billion-laughs entity bomb, then it is refused before parsing', async () => {
    const bomb =
      '<?xml version="1.0"?>\n' +
      '<!DOCTYPE lolz [\n' +
      ' <!ENTITY lol "lol">\n' +
      ' <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">\n' +
      ' <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">\n' +
      ' <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">\n' +
      ']>\n' +
      '<object><user>&lol4;</user></object>';
    const error = await refusal(bomb, 'application/xml');
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toMatch(/DOCTYPE|entit/i);
  });

  it('when the XML declares an external SYSTEM entity, then it is refused', async () => {
    const xxe =
      '<?xml version="1.0"?><!DOCTYPE object [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><object><user>&xxe;</user></object>';
    const error = await refusal(xxe, 'application/xml');
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toMatch(/DOCTYPE|entit/i);
  });

  it('when the DOCTYPE is written in lower case, then it is refused too', async () => {
    const error = await refusal('<!doctype object><object><user>a</user></object>', 'application/xml');
    expect(error.code).toBe('INVALID_INPUT');
  });

  it('when an undeclared entity is referenced, then it is refused as invalid XML (nothing is expanded)', async () => {
    const error = await refusal('<object><user>&xxe;</user></object>', 'application/xml');
    expect(error.code).toBe('INVALID_INPUT');
  });

  it.each(['<object><user>alice</object>', 'not xml at all', '<object><user>a</user></object><extra/>'])(
    'when the XML is invalid (%s), then it is refused',
    async (xml) => {
      const error = await refusal(xml, 'application/xml');
      expect(error.code).toBe('INVALID_INPUT');
    },
  );

  it("when the XML is malformed, then the message is 'Request is not valid XML.'", async () => {
    expect((await refusal('<object><user>alice</object>', 'application/xml')).message).toBe(
      'Request is not valid XML.',
    );
  });
});

describe('content types and charsets', () => {
  it.each(['text/plain', 'multipart/form-data; boundary=x', 'application/octet-stream', 'application/yaml'])(
    'when the content type is %s, then it is refused as UNSUPPORTED_MEDIA_TYPE',
    async (contentType) => {
      expect((await refusal('{"a": 1}', contentType)).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    },
  );

  it.each([
    'application/json; charset=iso-8859-1',
    'application/json; charset=utf-16',
    'application/x-www-form-urlencoded; charset=latin1',
  ])('when the charset is not UTF-8 (%s), then it is refused as UNSUPPORTED_MEDIA_TYPE', async (contentType) => {
    expect((await refusal('{"a": 1}', contentType)).code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it.each([
    'application/json; charset=utf-8',
    'application/json; charset="utf-8"',
    'application/json;charset=utf8',
    'application/json; charset=us-ascii',
  ])('when the charset is UTF-8 compatible (%s), then the body is parsed', async (contentType) => {
    await expect(parseBody(fakeRequest('{"a": 1}', contentType))).resolves.toEqual({ a: 1 });
  });

  it.each([
    ['no content type', undefined],
    ['JSON', 'application/json'],
    ['XML', 'application/xml'],
    ['form', 'application/x-www-form-urlencoded'],
  ])('when the body is empty (%s), then the result is {}', async (_label, contentType) => {
    await expect(parseBody(fakeRequest(Buffer.alloc(0), contentType))).resolves.toEqual({});
  });

  it('when no body was read at all (req.body undefined), then the result is {}', async () => {
    await expect(parseBody(fakeRequest(undefined))).resolves.toEqual({});
  });

  it('when the JSON body is only whitespace, then the result is {}', async () => {
    await expect(parseBody(fakeRequest('  \n ', 'application/json'))).resolves.toEqual({});
  });
});
