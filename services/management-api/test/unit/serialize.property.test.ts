import fc from 'fast-check';
import { parseStringPromise } from 'xml2js';
import { toJson, toXml } from '../../src/http/serialize';
import { asResource } from '../../src/resources/marks';

/**
 * Properties of the wire formats over generated input. Strings are drawn from every UTF-16 code unit
 * (lone surrogates and control characters included) because request data reaches responses:
 * names, error messages echoing query values, the password echoed after a POST.
 */

const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
const anyString = fc.string({ unit: anyCodeUnit, maxLength: 40 });

/** Characters XML 1.0 can represent: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]. */
const xmlChar = fc.oneof(
  fc.constantFrom('\t', '\n', '\r', '<', '>', '&', '"', "'", ']]>'),
  fc.integer({ min: 0x20, max: 0xd7ff }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0xe000, max: 0xfffd }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0x10000, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
);
const xmlString = fc.string({ unit: xmlChar, maxLength: 40 });

/** Element names are field names chosen by the code, never by the client: plain XML names. */
const key = fc.stringMatching(/^k[a-z0-9_]{0,8}$/);

type Dict = { [k: string]: string | Dict };
const dictOf = (leaf: fc.Arbitrary<string>): fc.Arbitrary<Dict> =>
  fc.letrec<{ dict: Dict }>((tie) => ({
    dict: fc.dictionary(key, fc.oneof({ depthSize: 'small' }, leaf, tie('dict')), { maxKeys: 5 }),
  })).dict;

/** Reads back the tastypie XML of a dict of strings / nested dicts (xml2js default options). */
function decodeElement(el: unknown): string | Dict {
  if (typeof el === 'string') return el;
  const node = el as Record<string, unknown>;
  const attrs = node.$ as Record<string, string> | undefined;
  if (attrs?.type === 'hash') return decodeChildren(node);
  return (node._ as string | undefined) ?? '';
}
function decodeChildren(node: Record<string, unknown>): Dict {
  const out: Dict = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === '$' || k === '_') continue;
    const items = v as unknown[];
    expect(items).toHaveLength(1);
    out[k] = decodeElement(items[0]);
  }
  return out;
}
const decodeRoot = (root: unknown): Dict =>
  typeof root === 'string' ? {} : decodeChildren(root as Record<string, unknown>);

/** Rebuilds an object with its keys inserted in reverse order, recursively. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (value !== null && typeof value === 'object') {
    // fromEntries defines own properties, so a generated "__proto__" key stays a key.
    return Object.fromEntries(
      Object.keys(value)
        .reverse()
        .map((k) => [k, reversedKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

describe('toJson properties', () => {
  it('when given any string (any UTF-16 code units, lone surrogates included), then JSON.parse returns the same string', () => {
    fc.assert(
      fc.property(anyString, (s) => {
        expect(JSON.parse(toJson(s))).toBe(s);
        expect(JSON.parse(toJson({ s }))).toEqual({ s });
      }),
    );
  });

  it('when given any JSON-safe value, then JSON.parse of the output equals the value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(JSON.parse(toJson(v))).toEqual(JSON.parse(JSON.stringify(v)));
      }),
    );
  });

  it('when the keys of a value are inserted in another order, then the output is the same bytes (keys are sorted)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(toJson(reversedKeys(v))).toBe(toJson(v));
      }),
    );
  });

  it('when a key is "__proto__" (as JSON.parse can produce), then it is serialized as an ordinary key', () => {
    expect(toJson(JSON.parse('{"__proto__": 1, "a": 2}'))).toBe('{"__proto__": 1, "a": 2}');
  });
});

describe('toXml properties', () => {
  it('when given nested dicts of XML-representable strings, then the output is well-formed and reads back to the same data', async () => {
    await fc.assert(
      fc.asyncProperty(dictOf(xmlString), fc.boolean(), async (dict, resource) => {
        const xml = toXml(resource ? asResource({ ...dict }) : dict);
        expect(xml.startsWith("<?xml version='1.0' encoding='utf-8'?>\n")).toBe(true);
        const doc = await parseStringPromise(xml);
        const rootName = resource ? 'object' : 'response';
        expect(Object.keys(doc)).toEqual([rootName]);
        expect(decodeRoot(doc[rootName])).toEqual(dict);
      }),
    );
  });

  it('when given nested dicts of arbitrary strings (control characters, U+FFFE, lone surrogates), then toXml does not throw and the output is well-formed', async () => {
    await fc.assert(
      fc.asyncProperty(dictOf(anyString), async (dict) => {
        let xml = '';
        expect(() => {
          xml = toXml(dict);
        }).not.toThrow();
        await expect(parseStringPromise(xml)).resolves.toBeDefined();
      }),
    );
  });
});
