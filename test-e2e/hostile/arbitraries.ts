import fc from 'fast-check';
import type { RawRequest } from './raw-http';

/**
 * Generators of hostile requests for both services, shared by the jest suite (test-e2e/hostile)
 * and the large run (bench/hostile.bench.ts). Every endpoint of both services is a target; the
 * inputs are the classic ones: SQL and markup metacharacters, CR/LF/NUL, unicode and invalid UTF-8,
 * path traversal, absurd numbers, duplicate and unknown parameters, odd methods, deep, invalid,
 * oversized and entity-laden bodies, overlong URLs and headers.
 *
 * Requests that would be accepted writes on the management API are not generated: an
 * admin-authenticated write always targets an id that does not exist or carries a body that must
 * be refused (an unknown field at least). The checks then assert that no write was accepted and
 * that the database did not change.
 */
export type Service = 'api' | 'gateway';

export interface HostileRequest extends RawRequest {
  service: Service;
  /** The endpoint template, for reports ("PATCH /api/v1/users/{id}/"). */
  label: string;
  /** A write to the management API (anything but GET, HEAD, OPTIONS). */
  write: boolean;
}

export interface HostileContext {
  adminAuth: string;
  readerAuth: string;
  /** Ids that exist: targets for reads, and for refused writes. */
  userIds: string[];
  clusterIds: number[];
  operatorIds: number[];
  keyIds: string[];
  /** A gateway user that exists, and its password. */
  loginUser: string;
  loginPassword: string;
  /** Valid gateway tokens: a superuser's (may validate anything) and a normal user's. */
  superToken: string;
  userToken: string;
  /** URL of a TCP listener that records connections: external entities point at it. */
  trapUrl: string;
  /** Kept small by the bench so that every malformed login costs at most a few scrypt runs. */
  maxBodyBytes?: number;
}

// ---------------------------------------------------------------------------------------------
// Strings

export const SQL_STRINGS = [
  "' OR '1'='1",
  "admin'--",
  '1; DROP TABLE storage_users; --',
  '" OR 1=1 --',
  "'; SELECT pg_sleep(10); --",
  '%',
  '_',
  '%_%',
  '\\',
  '\\%',
  '$1',
  "1')::text; --",
  "' UNION SELECT password_hash FROM storage_users --",
  "E'\\x00'",
];
export const TRAVERSAL_STRINGS = [
  '../../../../etc/passwd',
  '..%2f..%2f..%2fetc%2fpasswd',
  '%2e%2e/%2e%2e/etc/passwd',
  '....//....//etc/passwd',
  '..\\..\\..\\windows\\win.ini',
  '/etc/passwd%00.json',
  '%c0%ae%c0%ae/%c0%ae%c0%ae/',
  '.',
  '..',
  '//',
];
export const NUMBER_STRINGS = [
  '-1',
  '0',
  '-0',
  '1e309',
  '1e3',
  'NaN',
  'Infinity',
  '0x1f',
  '1.5',
  ' 1',
  '1 ',
  '+1',
  '2147483648',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775809',
  '18446744073709551616',
  '99999999999999999999999999999999',
  '１２',
  '٣',
  '',
];
export const CONTROL_STRINGS = [
  'a\u0000b',
  '\u0000',
  'a\r\nSet-Cookie: x=1',
  'a\nb',
  'a\rb',
  '\u001b[31m',
  '\u007f',
  '\u0085',
  '\u2028',
  '\ufeff',
  '\t',
];
export const MARKUP_STRINGS = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  '&amp;&lt;',
  '${jndi:ldap://127.0.0.1/x}',
  '{{7*7}}',
  '%s%s%n',
  '__proto__',
  'constructor',
  'toString',
];

const long = fc.integer({ min: 256, max: 4096 }).map((n) => 'A'.repeat(n));

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      ...SQL_STRINGS,
      ...TRAVERSAL_STRINGS,
      ...NUMBER_STRINGS,
      ...CONTROL_STRINGS,
      ...MARKUP_STRINGS,
    ),
    weight: 5,
  },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 20 }), weight: 1 },
  { arbitrary: long, weight: 1 },
);

/** Login names the gateway is fuzzed with: few, so the failure limit soon answers 429 instead of scrypt. */
export const HOSTILE_LOGIN_NAMES = [
  "' OR '1'='1",
  'alice; DROP TABLE storage_users',
  '../../etc/passwd',
  'a\u0000b',
  'a\r\nX-Injected: 1',
  'ünïcödé-用户-🙂',
  '\ud800',
  'x'.repeat(300),
  '',
  ':',
  'AUTH_x:y',
  '%00',
];

// ---------------------------------------------------------------------------------------------
// Encodings

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const ALL_UNRESERVED = /^[A-Za-z0-9\-._~]*$/;
/** Each byte's encoded form, computed once: the large run encodes millions of strings. */
const BYTE_CODES = Array.from({ length: 256 }, (_, byte) => {
  const ch = String.fromCharCode(byte);
  return UNRESERVED.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
});

/** Percent-encodes every byte outside the unreserved set (lone surrogates become U+FFFD's bytes). */
export function percentEncode(s: string): string {
  if (ALL_UNRESERVED.test(s)) return s;
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) out += BYTE_CODES[byte]!;
  return out;
}

/** A string as a path segment or query value: encoded, half-encoded, raw, or broken escapes. */
const uriPart = (s: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.oneof(
    { arbitrary: s.map(percentEncode), weight: 6 },
    // eslint-disable-next-line no-control-regex
    { arbitrary: s.map((v) => v.replace(/[ #?&=%\r\n\u0000]/g, (c) => percentEncode(c))), weight: 2 },
    { arbitrary: fc.constantFrom('%', '%z', '%zz', '%ff%fe', '%c0%80', '%00', '%E0%A4%A', '%25', '%u0041'), weight: 1 },
  );

/**
 * Requests the HTTP parser refuses (the server then closes the connection), or that could be read
 * as two requests, travel on a connection of their own.
 */
const PLAIN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// eslint-disable-next-line no-control-regex
const CONTROL_IN_VALUE = /[\u0000-\u0008\u000a-\u001f\u007f]/;
const PLAIN_PATH = /^[\u0021-\u007e]*$/;

// ---------------------------------------------------------------------------------------------
// Query strings

const API_QUERY_KEYS = [
  'limit',
  'offset',
  'format',
  'order_by',
  'user',
  'user__startswith',
  'user__istartswith',
  'user__contains',
  'user__in',
  'user__iexact',
  'user__regex',
  'user__isnull',
  'id',
  'id__gt',
  'id__lte',
  'id__in',
  'cluster',
  'cluster__name',
  'cluster__id',
  'cluster__name__startswith',
  'cluster__in',
  'enabled',
  'is_superuser',
  'name',
  'name__icontains',
  'region',
  'uuid',
  'role',
  'node',
  'device',
  'policy',
  'size_bytes__gt',
  'used_bytes__isnull',
  'mounted',
  'username',
  'api_key',
  'callback',
  'password',
  'password_hash',
  'generation',
  'id__range',
  'quota_bytes',
  'quota_bytes__gte',
  'quota_bytes__isnull',
  'quota_count__lt',
  'quota_status',
  'quota_status__in',
  'quota_status__isnull',
  'quota_applied_at__gt',
  'quota_error',
  'account',
  'account__gt',
  'start',
  'end',
];
const GATEWAY_QUERY_KEYS = ['nocatalog', 'allow_expired', 'format', 'tenantName', 'X-Auth-Token'];
const HUGE_NUMBERS = [
  '1000000000000',
  '1001',
  '0',
  '-5',
  '9223372036854775807',
  '9223372036854775808',
  '1e3',
  '18446744073709551616',
  '1.0',
  '00000000000000000000001',
];

const queryString = (keys: readonly string[]): fc.Arbitrary<string> =>
  fc
    .array(
      fc.tuple(
        fc.oneof({ arbitrary: fc.constantFrom(...keys), weight: 5 }, { arbitrary: uriPart(hostileString), weight: 1 }),
        fc.oneof(
          { arbitrary: fc.constantFrom(...HUGE_NUMBERS), weight: 2 },
          { arbitrary: uriPart(hostileString), weight: 4 },
          { arbitrary: fc.constant(''), weight: 1 },
        ),
        fc.constantFrom('=', '=', '=', ''),
      ),
      { maxLength: 6 },
    )
    .chain((pairs) =>
      // Duplicate a parameter now and then (limit=1&limit=2, format=json&format=xml).
      fc.boolean().map((dup) => (dup && pairs.length ? [...pairs, pairs[0]!] : pairs)),
    )
    .map((pairs) => (pairs.length ? `?${pairs.map(([k, v, sep]) => (sep ? `${k}=${v}` : k)).join('&')}` : ''));

// ---------------------------------------------------------------------------------------------
// Bodies

export const BILLION_LAUGHS = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<object><user>&lol9;</user><password>&lol9;</password><hostile_unknown>1</hostile_unknown></object>`;

/** XML documents whose external entities point at a file and at the trap listener. */
export function externalEntityBodies(trapUrl: string): string[] {
  return [
    `<?xml version="1.0"?><!DOCTYPE object [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><object><user>&xxe;</user><password>aaaaaaaaaaaaaaaaaaaaaaaa</password><cluster>/api/v1/clusters/1/</cluster></object>`,
    `<?xml version="1.0"?><!DOCTYPE object [<!ENTITY xxe SYSTEM "${trapUrl}/entity">]><object><user>&xxe;</user><password>aaaaaaaaaaaaaaaaaaaaaaaa</password><cluster>/api/v1/clusters/1/</cluster></object>`,
    `<?xml version="1.0"?><!DOCTYPE object [<!ENTITY % remote SYSTEM "${trapUrl}/dtd"> %remote;]><object><user>x</user></object>`,
    `<?xml version="1.0"?><!DOCTYPE object SYSTEM "${trapUrl}/doctype"><object><user>x</user></object>`,
    `<?xml version="1.0"?><?xml-stylesheet href="${trapUrl}/xsl"?><object><user>x</user></object>`,
    `<object xmlns:xi="http://www.w3.org/2001/XInclude"><user><xi:include href="${trapUrl}/xinclude" parse="text"/></user></object>`,
    `<object><user>x</user><xsi:schemaLocation xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">${trapUrl}/schema</xsi:schemaLocation></object>`,
  ];
}

const xmlEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const FIELD_NAMES = [
  'user',
  'password',
  'cluster',
  'is_superuser',
  'enabled',
  'name',
  'role',
  'clusters',
  'auth_url',
  'storage_url',
  'region',
  'uuid',
  'policies',
  'devices',
  'id',
  'resource_uri',
  'generation',
  'password_hash',
  '__proto__',
  'constructor',
];
const fieldName = fc.oneof(
  { arbitrary: fc.constantFrom(...FIELD_NAMES), weight: 4 },
  { arbitrary: hostileString, weight: 1 },
);
const fieldValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: hostileString, weight: 4 },
  {
    arbitrary: fc.constantFrom(
      1e308,
      -1,
      0,
      2 ** 53 + 1,
      1.5,
      true,
      false,
      null,
      '/api/v1/clusters/1/',
      '/api/v1/clusters/999999/',
    ),
    weight: 2,
  },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 2 },
);

/** The refused-write marker: a field no resource has. */
export const UNKNOWN_FIELD = 'hostile_unknown';

const jsonObject = (mustRefuse: boolean) =>
  fc.dictionary(fieldName, fieldValue, { maxKeys: 6 }).map((o) => (mustRefuse ? { ...o, [UNKNOWN_FIELD]: 1 } : o));

const deepJson = fc
  .tuple(fc.integer({ min: 100, max: 20_000 }), fc.boolean())
  .map(([depth, arrays]) =>
    arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth),
  );
const invalidJson = fc.constantFrom(
  '{',
  '{"user":}',
  'nul',
  '{"a":1,}',
  "{'a':1}",
  '\u0000',
  'NaN',
  '{"a":"\\x41"}',
  '{"a":"\\ud800"}',
  '[]',
  '"string"',
  '42',
  'null',
  '{"a":1}{"b":2}',
  '\ufeff{"a":1}',
);
const invalidUtf8 = fc.constantFrom(
  Buffer.from([0xff, 0xfe, 0xfd]),
  Buffer.concat([Buffer.from('{"user":"'), Buffer.from([0xc3, 0x28]), Buffer.from('","hostile_unknown":1}')]),
  Buffer.concat([Buffer.from('{"user":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('","hostile_unknown":1}')]),
  Buffer.concat([Buffer.from('{"user":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('","hostile_unknown":1}')]),
  Buffer.concat([
    Buffer.from('<object><user>'),
    Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
    Buffer.from('</user><hostile_unknown/></object>'),
  ]),
);
const formBody = (mustRefuse: boolean) =>
  fc
    .array(fc.tuple(fieldName, hostileString), { maxLength: 5 })
    .map((pairs) =>
      [...pairs, ...(mustRefuse ? [[UNKNOWN_FIELD, '1'] as [string, string]] : [])]
        .map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`)
        .join('&'),
    );
const xmlBody = (mustRefuse: boolean) =>
  fc
    .array(fc.tuple(fc.constantFrom(...FIELD_NAMES.filter((f) => /^[a-z_]+$/.test(f))), hostileString), {
      maxLength: 5,
    })
    .map(
      (pairs) =>
        `<object>${pairs.map(([k, v]) => `<${k}>${xmlEscape(v)}</${k}>`).join('')}${mustRefuse ? `<${UNKNOWN_FIELD}>1</${UNKNOWN_FIELD}>` : ''}</object>`,
    );
const malformedXml = fc.constantFrom(
  '<object><user>x</object>',
  '<object>',
  '<a><b></a></b>',
  '<object/><object/>',
  '<?xml version="1.0"?>',
  '<object><user a="1" a="2">x</user></object>',
  '<>',
  '<object><![CDATA[x]]></object>',
);
const deepXml = fc
  .integer({ min: 100, max: 5000 })
  .map((d) => '<object>' + '<a>'.repeat(d) + 'x' + '</a>'.repeat(d) + '</object>');

export interface Body {
  bytes: Buffer;
  contentType?: string;
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/xml',
  'text/xml',
  'application/x-www-form-urlencoded',
  'text/plain',
  'multipart/form-data; boundary=x',
  'application/vnd.api+json',
  'application/json; charset="utf-16"',
  ';;;',
  'application/json, application/xml',
];

/** An oversized body just past `limit` bytes, in one of the formats. */
export const oversizedBody = (limit: number): fc.Arbitrary<Body> =>
  fc
    .tuple(
      fc.integer({ min: limit + 1, max: limit + 64 * 1024 }),
      fc.constantFrom('application/json', 'application/xml', 'application/x-www-form-urlencoded', undefined),
    )
    .map(([size, contentType]) => {
      const filler = 'A'.repeat(size);
      const text =
        contentType === 'application/xml'
          ? `<object><user>${filler}</user></object>`
          : contentType === 'application/x-www-form-urlencoded'
            ? `user=${filler}`
            : `{"user":"${filler}"}`;
      return { bytes: Buffer.from(text), contentType };
    });

/**
 * A body. With `mustRefuse`, every object-shaped body carries an unknown field, so a write with an
 * admin key is still refused; bodies that are not objects are refused anyway.
 */
export function hostileBody(ctx: HostileContext, mustRefuse: boolean): fc.Arbitrary<Body> {
  const text = (a: fc.Arbitrary<string>, types: string[]) =>
    fc.tuple(a, fc.constantFrom(...types)).map(([s, contentType]) => ({ bytes: Buffer.from(s, 'utf8'), contentType }));
  const arbitraries: Array<{ arbitrary: fc.Arbitrary<Body>; weight: number }> = [
    {
      arbitrary: text(
        jsonObject(mustRefuse).map((o) => JSON.stringify(o)),
        ['application/json', 'application/json; charset=utf-8'],
      ),
      weight: 6,
    },
    { arbitrary: text(deepJson, ['application/json']), weight: 1 },
    { arbitrary: text(invalidJson, ['application/json']), weight: 2 },
    {
      arbitrary: invalidUtf8.map((bytes) => ({
        bytes,
        contentType: bytes[0] === 0x3c ? 'application/xml' : 'application/json',
      })),
      weight: 1,
    },
    { arbitrary: text(formBody(mustRefuse), ['application/x-www-form-urlencoded']), weight: 2 },
    { arbitrary: text(xmlBody(mustRefuse), ['application/xml', 'text/xml']), weight: 2 },
    { arbitrary: text(malformedXml, ['application/xml']), weight: 1 },
    { arbitrary: text(deepXml, ['application/xml']), weight: 1 },
    {
      arbitrary: text(fc.constantFrom(BILLION_LAUGHS, ...externalEntityBodies(ctx.trapUrl)), [
        'application/xml',
        'text/xml',
        'application/json',
      ]),
      weight: 2,
    },
    {
      arbitrary: text(
        jsonObject(true).map((o) => JSON.stringify(o)),
        CONTENT_TYPES,
      ),
      weight: 1,
    },
    { arbitrary: oversizedBody(ctx.maxBodyBytes ?? 64 * 1024), weight: 1 },
  ];
  if (!mustRefuse) arbitraries.push({ arbitrary: fc.constant({ bytes: Buffer.alloc(0) }), weight: 2 });
  return fc.oneof(...arbitraries);
}

// ---------------------------------------------------------------------------------------------
// Headers and methods

const WRITE_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];
const ODD_METHODS = [
  'OPTIONS',
  'TRACE',
  'PROPFIND',
  'MKCOL',
  'PURGE',
  'LINK',
  'SEARCH',
  'QUERY',
  'FOO',
  'get',
  'G\u0000ET',
  'GET /x',
];
const method = fc.oneof(
  { arbitrary: fc.constantFrom('GET', 'HEAD', ...WRITE_METHODS), weight: 8 },
  { arbitrary: fc.constantFrom(...ODD_METHODS), weight: 1 },
);

const headerValue = fc.oneof(
  { arbitrary: hostileString, weight: 6 },
  { arbitrary: fc.integer({ min: 8 * 1024, max: 40 * 1024 }).map((n) => 'h'.repeat(n)), weight: 1 },
);
const EXTRA_HEADER_NAMES = [
  'X-Request-Id',
  'X-Openstack-Request-Id',
  'X-Forwarded-For',
  'Cookie',
  'Referer',
  'User-Agent',
  'X-HTTP-Method-Override',
  'Origin',
  'Range',
  'If-None-Match',
  'Expect',
  'Upgrade',
  'Accept-Encoding',
  'Accept-Charset',
  'Authorization',
];
const extraHeaders = fc.array(
  fc.tuple(
    fc.oneof(
      { arbitrary: fc.constantFrom(...EXTRA_HEADER_NAMES), weight: 5 },
      { arbitrary: fc.string({ minLength: 1, maxLength: 20 }), weight: 1 },
    ),
    headerValue,
  ),
  { maxLength: 3 },
);

const apiAuth = (ctx: HostileContext): fc.Arbitrary<string | undefined> =>
  fc.oneof(
    { arbitrary: fc.constant(ctx.adminAuth), weight: 4 },
    { arbitrary: fc.constant(ctx.readerAuth), weight: 2 },
    { arbitrary: fc.constant(undefined), weight: 1 },
    {
      arbitrary: fc.constantFrom(
        'ApiKey root:wrong-key-000000000000000000000000',
        'ApiKey root',
        'ApiKey :',
        'Basic cm9vdDpyb290',
        'Bearer x',
        'ApiKey',
        'apikey  root:x  y',
        `${ctx.adminAuth}\u0000`,
      ),
      weight: 1,
    },
    { arbitrary: hostileString.map((s) => `ApiKey ${s}:${s}`), weight: 1 },
  );
const accept = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 4 },
  {
    arbitrary: fc.constantFrom(
      'application/json',
      'application/xml',
      'text/xml',
      '*/*',
      'text/html',
      'application/json;q=2',
      'application/xml;q=abc',
      ';;;',
      ',,,',
      'application/*',
    ),
    weight: 3,
  },
  { arbitrary: hostileString, weight: 1 },
);

function headerList(pairs: Array<[string, string | undefined]>): Array<[string, string]> {
  return pairs.filter((p): p is [string, string] => p[1] !== undefined);
}

// ---------------------------------------------------------------------------------------------
// The management API

/** decodeURIComponent, or the text itself where it is not valid percent-encoding. */
const safeDecode = (text: string): string => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

const nonexistentId = fc.constantFrom('999999', '2147483647', '9223372036854775807');
const hostileId = fc.oneof(
  { arbitrary: fc.constantFrom(...NUMBER_STRINGS.filter((s) => s !== '')), weight: 3 },
  { arbitrary: uriPart(hostileString), weight: 3 },
  {
    arbitrary: fc.constantFrom('1;DROP TABLE clusters', '1 OR 1=1', '%2e%2e', '..', '1%2f..', '1/../2', '%00', '1%00'),
    weight: 1,
  },
);

const API_TEMPLATES: Array<{ path: string; methods: string[] }> = [
  { path: '/api/v1/', methods: ['GET'] },
  { path: '/api/v1', methods: ['GET'] },
  { path: '/api/v1/{resource}/schema/', methods: ['GET'] },
  { path: '/api/v1/clusters/', methods: ['GET', 'POST'] },
  { path: '/api/v1/clusters/{cluster}/', methods: ['GET', 'PATCH', 'DELETE'] },
  { path: '/api/v1/clusters/{cluster}/devices/', methods: ['GET', 'PUT'] },
  { path: '/api/v1/clusters/{cluster}/capacity/list/', methods: ['GET'] },
  { path: '/api/v1/users/', methods: ['GET', 'POST'] },
  { path: '/api/v1/users/{user}/', methods: ['GET', 'PATCH', 'DELETE'] },
  { path: '/api/v1/users/{user}', methods: ['DELETE'] },
  { path: '/api/v1/operators/', methods: ['GET', 'POST'] },
  { path: '/api/v1/operators/{operator}/', methods: ['GET', 'PATCH', 'DELETE'] },
  { path: '/api/v1/operators/{operator}/keys/', methods: ['GET', 'POST'] },
  { path: '/api/v1/operators/{operator}/keys/{key}/', methods: ['DELETE'] },
  { path: '/api/v1/audit/', methods: ['GET'] },
  { path: '/api/v1/audit/{audit}/', methods: ['GET'] },
  { path: '/healthz', methods: ['GET'] },
  { path: '/readyz', methods: ['GET'] },
  { path: '/metrics', methods: ['GET'] },
  { path: '/api/v2/{resource}/', methods: ['GET'] },
  { path: '/{random}', methods: ['GET'] },
  { path: '/api/v1/{random}/', methods: ['GET'] },
  { path: '/api/v1/users/{user}/{random}', methods: ['GET'] },
];

/** One hostile request to the management API. */
export function apiRequest(ctx: HostileContext): fc.Arbitrary<HostileRequest> {
  return fc
    .record({
      template: fc.constantFrom(...API_TEMPLATES),
      methodChoice: fc.oneof({ arbitrary: fc.constant('template'), weight: 3 }, { arbitrary: method, weight: 2 }),
      idChoice: fc.oneof(
        { arbitrary: fc.constant('existing'), weight: 3 },
        { arbitrary: fc.constant('nonexistent'), weight: 1 },
        { arbitrary: fc.constant('hostile'), weight: 2 },
      ),
      existing: fc.nat(),
      nonexistent: nonexistentId,
      hostile: hostileId,
      resource: fc.oneof(
        fc.constantFrom('users', 'clusters', 'operators', 'audit', 'devices', 'nope'),
        uriPart(hostileString),
      ),
      random: fc.oneof(uriPart(hostileString), fc.constantFrom(...TRAVERSAL_STRINGS)),
      query: queryString(API_QUERY_KEYS),
      overlongUrl: fc.oneof(
        { arbitrary: fc.constant(0), weight: 20 },
        { arbitrary: fc.integer({ min: 9_000, max: 40_000 }), weight: 1 },
      ),
      auth: apiAuth(ctx),
      accept,
      contentType: fc.option(fc.constantFrom(...CONTENT_TYPES), { nil: undefined }),
      extra: extraHeaders,
      seed: fc.nat(),
    })
    .chain((r) => {
      const methodName =
        r.methodChoice === 'template' ? r.template.methods[r.seed % r.template.methods.length]! : r.methodChoice;
      const write = !['GET', 'HEAD', 'OPTIONS'].includes(methodName);
      // An admin write must be refused: a missing target, or a body with an unknown field.
      const adminWrite = write && r.auth === ctx.adminAuth;
      const id = (existing: Array<string | number>) => {
        // A raw trailing space ('1 ') would reach the app as '1': Node's parser drops the extra
        // space before HTTP/1.1, and the admin would delete row 1. Encoded, the app sees '1 '.
        // A hostile id with a digit in it ('2', '+2', '1/../2') may still name an existing row, which
        // the admin would then really delete: those become a missing id.
        if (adminWrite && methodName === 'DELETE')
          return r.idChoice === 'hostile' && !/\d/.test(safeDecode(r.hostile))
            ? r.hostile.replace(/ /g, '%20')
            : r.nonexistent;
        if (r.idChoice === 'existing' && existing.length) return String(existing[r.existing % existing.length]);
        return r.idChoice === 'nonexistent' ? r.nonexistent : r.hostile;
      };
      let path = r.template.path
        .replace('{resource}', r.resource)
        .replace('{cluster}', id(ctx.clusterIds))
        .replace('{user}', id(ctx.userIds))
        .replace('{operator}', id(ctx.operatorIds))
        .replace('{key}', id(ctx.keyIds))
        .replace('{audit}', id([]))
        .replace('{random}', r.random);
      if (r.overlongUrl) path += `${path.includes('?') ? '&' : '?'}x=${'u'.repeat(r.overlongUrl)}`;
      path += r.query;
      const bodyArb = ['GET', 'HEAD', 'OPTIONS', 'DELETE'].includes(methodName)
        ? fc.option(hostileBody(ctx, true), { freq: 8, nil: undefined })
        : hostileBody(ctx, adminWrite);
      return bodyArb.map((body): HostileRequest => {
        const headers = headerList([
          ['Authorization', r.auth],
          ['Accept', r.accept],
          ['Content-Type', r.contentType ?? body?.contentType],
          ...r.extra,
        ]);
        return finish({
          service: 'api',
          method: methodName,
          path,
          headers,
          body: body?.bytes,
          label: `${methodName} ${r.template.path}`,
          write,
        });
      });
    });
}

// ---------------------------------------------------------------------------------------------
// The auth gateway

const GATEWAY_TEMPLATES: Array<{ path: string; methods: string[] }> = [
  { path: '/auth/', methods: ['GET'] },
  { path: '/auth', methods: ['GET'] },
  { path: '/auth/v1.0', methods: ['GET'] },
  { path: '/auth/v1', methods: ['GET'] },
  { path: '/auth/v2.0', methods: ['POST'] },
  { path: '/auth/v2.0/tokens', methods: ['POST'] },
  { path: '/auth/v2.0/tokens/{token}', methods: ['GET'] },
  { path: '/auth/v3', methods: ['GET'] },
  { path: '/auth/v3/', methods: ['GET'] },
  { path: '/auth/v3/tokens', methods: ['POST'] },
  { path: '/auth/v3/auth/tokens', methods: ['GET', 'HEAD', 'POST', 'DELETE'] },
  { path: '/auth/v1.0/users/{name}/token', methods: ['DELETE'] },
  { path: '/healthz', methods: ['GET'] },
  { path: '/auth/{random}', methods: ['GET'] },
  { path: '/{random}', methods: ['GET'] },
];

const fakeJwt = fc.constantFrom(
  'eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJyb290IiwicmlkIjoieCJ9.',
  'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.AAAA',
  'a.b.c',
  '....',
  'gAAAAABfake',
);

/** One hostile request to the auth gateway. */
export function gatewayRequest(ctx: HostileContext): fc.Arbitrary<HostileRequest> {
  const loginName = fc.oneof(
    { arbitrary: fc.constantFrom(...HOSTILE_LOGIN_NAMES), weight: 4 },
    {
      arbitrary: fc.constantFrom(ctx.loginUser, `${ctx.loginUser}:${ctx.loginUser}`, `AUTH_other:${ctx.loginUser}`),
      weight: 2,
    },
  );
  const password = fc.oneof(
    { arbitrary: hostileString, weight: 4 },
    { arbitrary: fc.constant(ctx.loginPassword), weight: 1 },
  );
  // Names that are not strings are refused before any password check; string names come from the
  // small pool above, so the per-name failure limit bounds the scrypt runs however long the run.
  const notAString = fc.oneof(
    fc.constantFrom<unknown>(1e308, -1, 0, true, false, null),
    fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  );
  const token = fc.oneof(
    { arbitrary: fc.constantFrom(ctx.superToken, ctx.userToken), weight: 3 },
    { arbitrary: fakeJwt, weight: 1 },
    { arbitrary: hostileString, weight: 2 },
  );
  const named = fc.record(
    { id: fc.option(hostileString, { nil: undefined }), name: fc.option(loginName, { nil: undefined }) },
    { requiredKeys: [] },
  );
  const v2Body = fc
    .record(
      {
        username: fc.oneof(loginName, notAString),
        password: fc.oneof(password, fieldValue),
        tenantName: fc.option(fc.oneof(hostileString, fieldValue), { nil: undefined }),
        tenantId: fc.option(hostileString, { nil: undefined }),
      },
      { requiredKeys: [] },
    )
    .map((c) => ({
      auth: {
        passwordCredentials: { username: c.username, password: c.password },
        tenantName: c.tenantName,
        tenantId: c.tenantId,
      },
    }));
  const v3Body = fc
    .record({
      methods: fc.oneof(fc.constant(['password']), fc.array(hostileString, { maxLength: 3 }), fieldValue),
      name: fc.oneof(loginName, notAString),
      password: fc.oneof(password, fieldValue),
      domain: fc.option(named, { nil: undefined }),
      scope: fc.option(
        fc.oneof(
          fc.constant<unknown>('unscoped'),
          named.map((p) => ({ project: p })),
          fc.constant<unknown>({ domain: { id: 'default' } }),
          fieldValue,
        ),
        { nil: undefined },
      ),
    })
    .map((v) => ({
      auth: {
        identity: { methods: v.methods, password: { user: { name: v.name, password: v.password, domain: v.domain } } },
        scope: v.scope,
      },
    }));
  const body: fc.Arbitrary<Body> = fc.oneof(
    {
      arbitrary: fc
        .oneof(v2Body, v3Body)
        .map((o) => ({ bytes: Buffer.from(JSON.stringify(o)), contentType: 'application/json' })),
      weight: 6,
    },
    { arbitrary: hostileBody(ctx, false), weight: 4 },
  );
  return fc
    .record({
      template: fc.constantFrom(...GATEWAY_TEMPLATES),
      methodChoice: fc.oneof({ arbitrary: fc.constant('template'), weight: 3 }, { arbitrary: method, weight: 2 }),
      seed: fc.nat(),
      pathToken: fc.oneof(token.map(percentEncode), uriPart(hostileString)),
      name: fc.oneof(loginName.map(percentEncode), uriPart(hostileString), fc.constant(ctx.loginUser)),
      random: fc.oneof(uriPart(hostileString), fc.constantFrom(...TRAVERSAL_STRINGS)),
      query: queryString(GATEWAY_QUERY_KEYS),
      overlongUrl: fc.oneof(
        { arbitrary: fc.constant(0), weight: 20 },
        { arbitrary: fc.integer({ min: 9_000, max: 40_000 }), weight: 1 },
      ),
      v1User: fc.option(loginName, { nil: undefined }),
      v1Key: fc.option(password, { nil: undefined }),
      storageHeaders: fc.boolean(),
      authToken: fc.option(token, { nil: undefined }),
      subjectToken: fc.option(token, { nil: undefined }),
      contentType: fc.option(fc.constantFrom(...CONTENT_TYPES), { nil: undefined }),
      extra: extraHeaders,
      body: fc.option(body, { freq: 3, nil: undefined }),
    })
    .map((r): HostileRequest => {
      const methodName =
        r.methodChoice === 'template' ? r.template.methods[r.seed % r.template.methods.length]! : r.methodChoice;
      let path = r.template.path
        .replace('{token}', r.pathToken)
        .replace('{name}', r.name)
        .replace('{random}', r.random);
      if (r.overlongUrl) path += `?x=${'u'.repeat(r.overlongUrl)}`;
      path += r.query;
      const headers = headerList([
        [r.storageHeaders ? 'X-Storage-User' : 'X-Auth-User', r.v1User],
        [r.storageHeaders ? 'X-Storage-Pass' : 'X-Auth-Key', r.v1Key],
        ['X-Auth-Token', r.authToken],
        ['X-Subject-Token', r.subjectToken],
        ['Content-Type', r.contentType ?? r.body?.contentType],
        ...r.extra,
      ]);
      return finish({
        service: 'gateway',
        method: methodName,
        path,
        headers,
        body: r.body?.bytes,
        label: `${methodName} ${r.template.path}`,
        write: false,
      });
    });
}

/** Both services, about half each. */
export const hostileRequest = (ctx: HostileContext): fc.Arbitrary<HostileRequest> =>
  fc.oneof(apiRequest(ctx), gatewayRequest(ctx));

/** Marks requests that break HTTP framing so they travel on a connection of their own. */
function finish(req: HostileRequest): HostileRequest {
  const breaking =
    !PLAIN_METHODS.has(req.method) ||
    !PLAIN_PATH.test(req.path) ||
    req.headers.some(([k, v]) => !TOKEN.test(k) || CONTROL_IN_VALUE.test(v));
  // Past Node's header limit the server answers 431 and closes; a body past the limit may be left unread.
  const huge =
    req.path.length + req.headers.reduce((n, [k, v]) => n + k.length + v.length, 0) > 8000 ||
    (req.body?.length ?? 0) > 60_000;
  return { ...req, fresh: breaking || huge };
}

/** Short text for a failure report; long inputs cut. */
export function describe(req: HostileRequest): string {
  const cut = (s: string) => (s.length > 200 ? `${s.slice(0, 200)}…(${s.length} chars)` : s);
  const body = req.body ? cut(req.body.toString('utf8')) : '';
  return `${req.service} ${JSON.stringify(cut(req.method))} ${JSON.stringify(cut(req.path))} headers=${JSON.stringify(req.headers.map(([k, v]) => [cut(k), cut(v)]))}${body ? ` body=${JSON.stringify(body)}` : ''}`;
}
