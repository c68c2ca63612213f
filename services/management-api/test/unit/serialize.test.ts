import { parseStringPromise } from 'xml2js';
import { toJson, toXml } from '../../src/http/serialize';
import { asResource } from '../../src/resources/marks';

const DECLARATION = "<?xml version='1.0' encoding='utf-8'?>\n";

describe('toJson', () => {
  it('when given a flat dict, then keys are sorted and separators are ", " and ": "', () => {
    expect(toJson({ b: 1, a: 'x', c: true })).toBe('{"a": "x", "b": 1, "c": true}');
  });

  it('when dicts are nested, then keys are sorted at every level', () => {
    expect(toJson({ z: { y: 1, x: { q: 2, p: 3 } }, a: [{ d: 4, c: 5 }] })).toBe(
      '{"a": [{"c": 5, "d": 4}], "z": {"x": {"p": 3, "q": 2}, "y": 1}}',
    );
  });

  it('when given scalars, then null, booleans, numbers and strings are JSON', () => {
    expect(toJson(null)).toBe('null');
    expect(toJson(true)).toBe('true');
    expect(toJson(false)).toBe('false');
    expect(toJson(0)).toBe('0');
    expect(toJson(-12)).toBe('-12');
    expect(toJson(1.5)).toBe('1.5');
    expect(toJson('plain')).toBe('"plain"');
    expect(toJson('quote " backslash \\ newline \n')).toBe('"quote \\" backslash \\\\ newline \\n"');
  });

  it('when given a list, then items are separated by ", " and order is kept', () => {
    expect(toJson([3, 'a', null, false, [1, 2]])).toBe('[3, "a", null, false, [1, 2]]');
  });

  it('when given empty containers, then they are {} and []', () => {
    expect(toJson({})).toBe('{}');
    expect(toJson([])).toBe('[]');
    expect(toJson({ objects: [] })).toBe('{"objects": []}');
  });

  it('when a dict value is null, then the key is kept with null', () => {
    expect(toJson({ next: null, previous: null })).toBe('{"next": null, "previous": null}');
  });

  it('when given a tastypie list envelope, then it matches the reference byte for byte', () => {
    const body = {
      objects: [asResource({ user: 'alice', id: '12', enabled: true, cluster: '/api/v1/clusters/2/' })],
      meta: { total_count: 1, previous: null, offset: 0, next: null, limit: 20 },
    };
    expect(toJson(body)).toBe(
      '{"meta": {"limit": 20, "next": null, "offset": 0, "previous": null, "total_count": 1}, ' +
        '"objects": [{"cluster": "/api/v1/clusters/2/", "enabled": true, "id": "12", "user": "alice"}]}',
    );
  });

  it('when strings are non-ASCII, then the output parses back to the same text', () => {
    const value = { user: 'jöhn 🎉 山田' };
    expect(JSON.parse(toJson(value))).toEqual(value);
  });
});

describe('toXml', () => {
  it("when given anything, then the first line is exactly <?xml version='1.0' encoding='utf-8'?> followed by a newline", () => {
    const xml = toXml({ a: 1 });
    expect(xml.startsWith(DECLARATION)).toBe(true);
    expect(xml.split('\n')).toHaveLength(2);
  });

  it('when given a plain dict, then the root is <response> with children sorted', () => {
    expect(toXml({ b: 'two', a: 'one' })).toBe(`${DECLARATION}<response><a>one</a><b>two</b></response>`);
  });

  it('when given a resource, then the root is <object> with no type attribute', () => {
    expect(toXml(asResource({ name: 'TestCluster', id: 2 }))).toBe(
      `${DECLARATION}<object><id type="integer">2</id><name>TestCluster</name></object>`,
    );
  });

  it('when values are typed scalars, then integer, float, boolean True/False and self-closing null are rendered', () => {
    expect(toXml({ i: 20, f: 1.5, t: true, n: null, s: 'x', b: false })).toBe(
      `${DECLARATION}<response><b type="boolean">False</b><f type="float">1.5</f><i type="integer">20</i>` +
        '<n type="null"/><s>x</s><t type="boolean">True</t></response>',
    );
  });

  it('when a value is a nested dict, then it is type="hash" with its children sorted', () => {
    expect(toXml({ meta: { offset: 0, limit: 20 } })).toBe(
      `${DECLARATION}<response><meta type="hash"><limit type="integer">20</limit><offset type="integer">0</offset></meta></response>`,
    );
  });

  it('when a value is a list of scalars, then it is type="list" of <value> items in order', () => {
    expect(toXml({ clusters: ['/api/v1/clusters/2/', '/api/v1/clusters/1/'] })).toBe(
      `${DECLARATION}<response><clusters type="list"><value>/api/v1/clusters/2/</value><value>/api/v1/clusters/1/</value></clusters></response>`,
    );
  });

  it('when list scalars are typed, then each <value> carries its type', () => {
    expect(toXml({ l: [1, true, null] })).toBe(
      `${DECLARATION}<response><l type="list"><value type="integer">1</value><value type="boolean">True</value><value type="null"/></l></response>`,
    );
  });

  it('when a list holds resources, then each is an <object> without type, in order', () => {
    const body = { objects: [asResource({ id: 2, name: 'b' }), asResource({ name: 'a', id: 1 })] };
    expect(toXml(body)).toBe(
      `${DECLARATION}<response><objects type="list">` +
        '<object><id type="integer">2</id><name>b</name></object>' +
        '<object><id type="integer">1</id><name>a</name></object>' +
        '</objects></response>',
    );
  });

  it('when a list holds plain dicts, then each is <object type="hash">', () => {
    expect(toXml({ items: [{ k: 'v' }] })).toBe(
      `${DECLARATION}<response><items type="list"><object type="hash"><k>v</k></object></items></response>`,
    );
  });

  // xml2js groups children by tag; no response of this API mixes dicts and scalars in one list.
  it('when a list mixes dicts and scalars, then dicts come first and each kind keeps its order', () => {
    expect(toXml({ l: ['first', { k: 'v' }, 'second'] })).toBe(
      `${DECLARATION}<response><l type="list"><object type="hash"><k>v</k></object><value>first</value><value>second</value></l></response>`,
    );
  });

  it('when text contains < and &, then it is escaped', () => {
    expect(toXml({ error: 'a <b> & c' })).toBe(`${DECLARATION}<response><error>a &lt;b&gt; &amp; c</error></response>`);
  });

  it('when rendering the tastypie list example, then it matches the spec', () => {
    const body = {
      objects: [asResource({ name: 'TestCluster', id: 2 })],
      meta: { total_count: 1, previous: null, offset: 0, next: null, limit: 20 },
    };
    expect(toXml(body)).toBe(
      `${DECLARATION}<response><meta type="hash"><limit type="integer">20</limit><next type="null"/>` +
        '<offset type="integer">0</offset><previous type="null"/><total_count type="integer">1</total_count></meta>' +
        '<objects type="list"><object><id type="integer">2</id><name>TestCluster</name></object></objects></response>',
    );
  });

  it('when an error body is rendered, then it is a <response> with an <error> child', () => {
    expect(toXml({ error: 'Invalid Accept header' })).toBe(
      `${DECLARATION}<response><error>Invalid Accept header</error></response>`,
    );
  });

  it('when the output is parsed back with xml2js, then it is well-formed and carries the same data', async () => {
    const body = {
      meta: { limit: 20, next: '/api/v1/users/?a=1&limit=20&offset=20', previous: null },
      objects: [asResource({ user: 'jöhn <&> "quoted"', enabled: false, id: '7' })],
    };
    const doc = await parseStringPromise(toXml(body));
    expect(doc.response.meta[0].$.type).toBe('hash');
    expect(doc.response.meta[0].limit[0]).toEqual({ _: '20', $: { type: 'integer' } });
    expect(doc.response.meta[0].next[0]).toBe('/api/v1/users/?a=1&limit=20&offset=20');
    expect(doc.response.meta[0].previous[0]).toEqual({ $: { type: 'null' } });
    const object = doc.response.objects[0].object[0];
    expect(object.user[0]).toBe('jöhn <&> "quoted"');
    expect(object.enabled[0]).toEqual({ _: 'False', $: { type: 'boolean' } });
    expect(object.id[0]).toBe('7');
  });

  it('when a stored name holds a character XML 1.0 cannot represent (U+FFFE, allowed by validation), then the output is still well-formed XML', async () => {
    // Usernames and cluster names only exclude C0/C1 controls; U+FFFE/U+FFFF pass validation and are
    // valid UTF-8 that Postgres stores. One such row must not make every XML list of that resource fail.
    let xml = '';
    expect(() => {
      xml = toXml({ objects: [asResource({ user: 'bad\ufffename' })] });
    }).not.toThrow();
    await expect(parseStringPromise(xml)).resolves.toBeDefined();
  });

  it('when an echoed error message holds a control character, then the XML error is still well-formed', async () => {
    // e.g. GET /api/v1/users/?format=xml&limit=%01 → "Invalid limit '\u0001' provided. ..."
    let xml = '';
    expect(() => {
      xml = toXml({ error: "Invalid limit '\u0001' provided. Please provide a positive integer." });
    }).not.toThrow();
    const doc = await parseStringPromise(xml);
    expect(doc.response.error[0]).toContain('Please provide a positive integer.');
  });
});
