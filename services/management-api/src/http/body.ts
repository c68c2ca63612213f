import type { Request, RequestHandler } from 'express';
import { parse as parseLossless } from 'lossless-json';
import { parseStringPromise } from 'xml2js';
import { BodyRefused, readBody } from '@cairn/runtime';
import { echoName, errors } from '@cairn/domain';
import type { ResourceDef } from './resource';

/**
 * Request bodies arrive as JSON, form-encoded or tastypie XML; all become one plain object that the
 * same joi schema validates. A body is read only when a service asks for it, which it does once the
 * operator is known to be allowed the write: a refused request never costs the memory of its body.
 */

/** Bodies are small field sets; anything larger is refused with 413 before it is parsed. */
export const BODY_LIMIT = '64kb';

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2 };

/** '64kb', '200mb' in bytes. */
export function limitBytes(limit: string): number {
  const m = /^(\d+)(b|kb|mb)$/.exec(limit);
  if (!m) throw new Error(`bad body limit ${limit}`);
  return Number(m[1]) * UNITS[m[2]!]!;
}

/**
 * For the probes, which read a body sent to them with express.raw() (see app.ts): refuses one whose
 * declared Content-Length is over `limit` ('64kb') with 413 at once. express.raw() would first read
 * and discard the whole body, however large, before answering.
 */
export function refuseDeclaredOver(limit: string): RequestHandler {
  const max = limitBytes(limit);
  return (req, _res, next) => {
    // The body stays unread; the connection ends after the answer (lingerOverUnreadBodies).
    if (req.body === undefined && Number(req.headers['content-length']) > max) {
      throw errors.payloadTooLarge('Request body is too large.');
    }
    next();
  };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decode(raw: Buffer): string {
  try {
    return utf8.decode(raw);
  } catch {
    throw errors.invalidInput('Request body is not valid UTF-8.');
  }
}

/**
 * An integer too large for a double (past 2^53 - 1) as its decimal text, which is how such a value
 * is sent as a string: `9223372036854775807`, exact, instead of JSON.parse's nearest double
 * (…808), which a quota would refuse as out of range, naming a range its true value is in.
 */
function exactNumber(text: string): unknown {
  const n = Number(text);
  return Number.isInteger(n) && !Number.isSafeInteger(n) && /^-?\d+$/.test(text) ? text : n;
}

/** A run of 16 digits: the body may hold an integer past 2^53 (16 digits and more). */
const MAY_HOLD_LARGE_INTEGER = /\d{16}/;

/**
 * JSON.parse, whose answer is exact unless the body has an integer past 2^53 - 1: a body that may
 * hold one is parsed again with lossless-json, which keeps such an integer as its decimal text
 * (see exactNumber). A repeated key keeps its last value, as with JSON.parse.
 */
function parseJson(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    if (!MAY_HOLD_LARGE_INTEGER.test(text)) return value;
    return parseLossless(text, null, { parseNumber: exactNumber, onDuplicateKey: ({ newValue }) => newValue });
  } catch {
    throw errors.invalidInput('Request is not valid JSON.');
  }
}

/**
 * A key given once is a value, a key repeated a list of its values in order; a field that takes a
 * list (`lists`) is a list however many times it is given, so one value is a one-element list.
 */
function parseForm(text: string, lists: ReadonlySet<string>): Record<string, unknown> {
  const fields = new Map<string, string | string[]>();
  for (const [key, value] of new URLSearchParams(text)) {
    const prev = fields.get(key);
    fields.set(
      key,
      prev === undefined ? (lists.has(key) ? [value] : value) : Array.isArray(prev) ? [...prev, value] : [prev, value],
    );
  }
  return Object.fromEntries(fields);
}

type XmlElement = string | { $?: Record<string, string>; _?: string; [child: string]: unknown };

/** Tastypie documents are a few levels deep; a deeper one would only exhaust the stack here. */
const MAX_XML_DEPTH = 32;

function fromXmlElement(el: XmlElement, depth: number): unknown {
  if (typeof el === 'string') return el;
  if (depth > MAX_XML_DEPTH)
    throw errors.invalidInput(`The XML body is nested more than ${MAX_XML_DEPTH} levels deep.`);
  const type = el.$?.type;
  const text = el._ ?? '';
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      return text === 'True' || text === 'true' || text === '1'
        ? true
        : text === 'False' || text === 'false' || text === '0'
          ? false
          : text;
    case 'integer':
    case 'float':
      return /^[+-]?\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : text;
    case 'list': {
      const items: unknown[] = [];
      for (const tag of ['value', 'object'])
        for (const child of occurrences(el, tag)) items.push(fromXmlElement(child, depth + 1));
      return items;
    }
    default: {
      const children = Object.keys(el).filter((k) => k !== '$' && k !== '_');
      if (children.length === 0) return text;
      return fromXmlChildren(el, depth + 1);
    }
  }
}

/**
 * The occurrences of child element `tag` of `el`. xml2js asks `tag in el` before it stores a
 * child, so an element named like a member of every object (`constructor`, `toString`,
 * `__proto__`) finds the inherited value and keeps it as a first occurrence; it is not one.
 */
function occurrences(el: Record<string, unknown>, tag: string): XmlElement[] {
  if (!Object.hasOwn(el, tag)) return [];
  const values = el[tag] as XmlElement[];
  return tag in EMPTY && values[0] === EMPTY[tag] ? values.slice(1) : values;
}
const EMPTY: Record<string, unknown> = {};

function fromXmlChildren(el: Record<string, unknown>, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(el)) {
    if (key === '$' || key === '_') continue;
    const values = occurrences(el, key);
    if (values.length > 1) throw errors.invalidInput(`The XML element <${echoName(key)}> appears more than once.`);
    // Defined, not assigned: an element named __proto__ stays a field (which validation refuses)
    // instead of replacing the object's prototype.
    Object.defineProperty(out, key, {
      value: fromXmlElement(values[0]!, depth),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

async function parseXml(text: string): Promise<unknown> {
  // No DTDs at all: nothing to expand, nothing external to fetch.
  if (/<!DOCTYPE|<!ENTITY/i.test(text))
    throw errors.invalidInput('XML bodies may not contain a DOCTYPE or entity declarations.');
  // xml2js stops at the first root's end tag and ignores whatever follows; parse the document inside a
  // wrapper so trailing text or a second root element is seen and refused.
  const body = text.replace(/^\uFEFF?\s*<\?xml[^>]*\?>/, '');
  let wrapper: Record<string, unknown>;
  try {
    const doc = await parseStringPromise(`<cairn-body>${body}</cairn-body>`, {
      explicitArray: true,
      explicitRoot: false,
      strict: true,
      async: false,
    });
    wrapper = typeof doc === 'object' && doc !== null ? doc : {};
  } catch {
    throw errors.invalidInput('Request is not valid XML.');
  }
  const roots = Object.keys(wrapper)
    .filter((k) => k !== '$' && k !== '_')
    .map((k) => occurrences(wrapper, k));
  const strayText = typeof wrapper._ === 'string' && wrapper._.trim() !== '';
  if (roots.length !== 1 || roots[0]!.length !== 1 || strayText) throw errors.invalidInput('Request is not valid XML.');
  const root = roots[0]![0];
  if (!root || typeof root !== 'object') return typeof root === 'string' && root.trim() === '' ? {} : root;
  return fromXmlChildren(root as Record<string, unknown>, 0);
}

const UNSUPPORTED_TYPE =
  "Unsupported content type; send 'application/json', 'application/x-www-form-urlencoded' or 'application/xml'.";

const JSON_AS_FORM =
  "The body looks like JSON but was sent as 'application/x-www-form-urlencoded' (what curl -d sends unless told otherwise); " +
  "send it with the header 'Content-Type: application/json'.";

/** The fields of `resource` that take a list. */
const listFieldsOf = (resource?: ResourceDef): ReadonlySet<string> =>
  new Set(
    Object.entries(resource?.fields ?? {})
      .filter(([, f]) => f.type === 'list')
      .map(([name]) => name),
  );

/** The request's body, at most `limit` ('64kb', '200mb') once decompressed; 413 past it. */
async function rawBody(req: Request, limit: string): Promise<Buffer> {
  try {
    return await readBody(req, limitBytes(limit));
  } catch (e) {
    if (!(e instanceof BodyRefused)) throw e;
    if (e.reason === 'too-large') throw errors.payloadTooLarge(e.message);
    if (e.reason === 'encoding') throw errors.unsupportedMediaType(e.message);
    throw errors.invalidInput(e.message);
  }
}

/**
 * Reads and parses the request body into a plain object of fields; an empty body is `{}`.
 * `resource`: the resource the body is for, whose list fields a form may give a single value for;
 * `limit`: the most the body may hold.
 */
export async function parseBody(
  req: Request,
  resource?: ResourceDef,
  limit = BODY_LIMIT,
): Promise<Record<string, unknown>> {
  const contentType = (req.get('content-type') ?? '').toLowerCase();
  const [mediaType = '', ...params] = contentType.split(';').map((s) => s.trim());
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '');
  if (charset && charset !== 'utf-8' && charset !== 'utf8' && charset !== 'us-ascii') {
    throw errors.unsupportedMediaType(`Unsupported charset '${charset}'; send UTF-8.`);
  }
  const json = mediaType === '' || mediaType === 'application/json' || mediaType.endsWith('+json');
  const form = mediaType === 'application/x-www-form-urlencoded';
  const xml = mediaType === 'application/xml' || mediaType === 'text/xml';
  // Known from the headers: refused before the body is read.
  if (!json && !form && !xml) throw errors.unsupportedMediaType(UNSUPPORTED_TYPE);
  const text = decode(await rawBody(req, limit));
  let parsed: unknown;
  if (json) {
    parsed = text.trim() === '' ? {} : parseJson(text);
  } else if (form) {
    // `curl -d '{…}'` sends JSON as a form: its first "field" is then the document itself.
    const first = (new URLSearchParams(text).keys().next().value ?? '').trimStart();
    if (first.startsWith('{') || first.startsWith('[')) throw errors.unsupportedMediaType(JSON_AS_FORM);
    parsed = parseForm(text, listFieldsOf(resource));
  } else {
    parsed = text.trim() === '' ? {} : await parseXml(text);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw errors.invalidInput('The request body must be an object of fields.');
  }
  return parsed as Record<string, unknown>;
}

/**
 * A binary body (a ring file), sent as `application/octet-stream`, at most `limit` once
 * decompressed; the type is checked before the body is read.
 */
export async function binaryBody(req: Request, limit: string): Promise<Buffer> {
  const mediaType = (req.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (mediaType !== 'application/octet-stream')
    throw errors.unsupportedMediaType("Send the file itself with 'Content-Type: application/octet-stream'.");
  return rawBody(req, limit);
}
