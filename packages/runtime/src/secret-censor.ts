/**
 * What a service's log lines must never show, wherever a caller puts it in the object it logs.
 */
export interface Secrets {
  /** Fields holding a secret: censored at the top of a line and one level down (`password`, `user.password`). */
  fields: readonly string[];
  /** Headers (lower case) censored in `req.headers` and `res.headers`. */
  headers: readonly string[];
  /** Fields of a request body, each as its keys from the body down: censored in `body` and in `req.body`. */
  bodyFields?: readonly (readonly string[])[];
}

export const CENSORED = '[redacted]';

/** The headers that carry a credential in either service: Swift's, Keystone's and HTTP's own. */
export const CREDENTIAL_HEADERS: readonly string[] = [
  'authorization',
  'cookie',
  'proxy-authorization',
  'x-auth-key',
  'x-auth-token',
  'x-service-token',
  'x-storage-pass',
  'x-storage-token',
  'x-subject-token',
];

type Fields = Record<string, unknown>;

const isObject = (value: unknown): value is Fields => typeof value === 'object' && value !== null;
const has = (object: Fields, key: string): boolean => Object.prototype.hasOwnProperty.call(object, key);

/**
 * A shallow copy. A plain object is spread (a copy made from descriptors would be a slow dictionary
 * for JSON.stringify); anything else keeps its prototype and every own property (an Error's message
 * and stack too).
 */
function copyOf(object: Fields): Fields {
  const prototype = Object.getPrototypeOf(object) as object | null;
  if (prototype === Object.prototype || prototype === null) return { ...object };
  return Object.create(prototype, Object.getOwnPropertyDescriptors(object)) as Fields;
}

/**
 * A pino `formatters.log`: the object of each line with the secrets replaced by `[redacted]`, copied
 * only along the way to a secret (the caller's object is never changed; a line without one is the
 * same object). Each check is a fixed set of own-property lookups, however large the logged object.
 *
 * This replaces pino's `redact` paths. Its library parses every path again at every line, and the
 * wildcard ones (`*.password`) put a redactor on every key of every line: with the services' paths
 * that was most of a request log line's CPU and a third of the memory a gateway login allocated
 * (docs/benchmarks.md). Only a line's own fields pass through a formatter, not a child logger's
 * bindings: the one child per request binds the request's id, method and logged path.
 */
export function censorSecrets(secrets: Secrets): (line: Fields) => Fields {
  const { fields, headers, bodyFields = [] } = secrets;

  /** `object` with `keys` censored where present, or `object` itself when none is. */
  const censorKeys = (object: Fields, keys: readonly string[]): Fields => {
    let out = object;
    for (const key of keys) {
      if (!has(object, key)) continue;
      if (out === object) out = copyOf(object);
      out[key] = CENSORED;
    }
    return out;
  };

  /** `object` with the field at `path` censored, copying each object on the way, or `object` itself. */
  const censorPath = (object: Fields, path: readonly string[], at = 0): Fields => {
    const key = path[at]!;
    if (!has(object, key)) return object;
    const value = object[key];
    const last = at === path.length - 1;
    if (!last && !isObject(value)) return object;
    const replaced = last ? CENSORED : censorPath(value as Fields, path, at + 1);
    if (replaced === value) return object;
    const out = copyOf(object);
    out[key] = replaced;
    return out;
  };

  const censorBody = (body: Fields): Fields => bodyFields.reduce((out, path) => censorPath(out, path), body);

  /** `object`, or its copy if `copy` is not one already, with `key` set to `value`. */
  const withField = (object: Fields, copy: Fields, key: string, value: unknown): Fields => {
    const out = copy === object ? copyOf(object) : copy;
    out[key] = value;
    return out;
  };

  /** One level down: the fields, and for `req` and `res` their headers, for `req` and `body` the body. */
  const censorValue = (key: string, value: Fields): Fields => {
    let out = censorKeys(value, fields);
    if ((key === 'req' || key === 'res') && has(out, 'headers') && isObject(out.headers)) {
      const censored = censorKeys(out.headers, headers);
      if (censored !== out.headers) out = withField(value, out, 'headers', censored);
    }
    if (key === 'body') return censorBody(out);
    if (key === 'req' && has(out, 'body') && isObject(out.body)) {
      const censored = censorBody(out.body);
      if (censored !== out.body) out = withField(value, out, 'body', censored);
    }
    return out;
  };

  return (line) => {
    let out = censorKeys(line, fields);
    for (const key in line) {
      const value = line[key];
      if (!isObject(value) || !has(line, key) || out[key] === CENSORED) continue;
      const censored = censorValue(key, value);
      if (censored === value) continue;
      out = withField(line, out, key, censored);
    }
    return out;
  };
}
