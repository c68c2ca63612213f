import { echoName, errors, escapeHtml, hasControlCharacters } from '@cairn/domain';
import type { Filter, ListQuery, Lookup, Ordering } from '../services/list-query';
import type { FieldDef, ResourceDef } from './resource';

/**
 * Turns tastypie-style query parameters (`user__startswith=a`, `cluster__name=x`, `order_by=-id`)
 * into a validated, typed description of the query. Column names come only from resource
 * definitions, never from the request; values are always bound as parameters.
 */
export type { Filter, ListQuery, Ordering } from '../services/list-query';

const RESERVED = new Set(['format', 'limit', 'offset', 'order_by', 'callback', 'username', 'api_key']);
const ALL_LOOKUPS = new Set<string>([
  'exact',
  'iexact',
  'in',
  'startswith',
  'istartswith',
  'contains',
  'icontains',
  'gt',
  'gte',
  'lt',
  'lte',
  'isnull',
  'range',
  'year',
  'month',
  'day',
  'regex',
  'iregex',
  'endswith',
  'iendswith',
]);

export type QueryParams = Array<[string, string]>;

const mismatched = () => errors.invalidInput('Invalid resource lookup data provided (mismatched type).');

function parseBoolean(value: string): boolean {
  if (value === 'true' || value === 'True' || value === '1') return true;
  if (value === 'false' || value === 'False' || value === '0') return false;
  throw mismatched();
}

/**
 * An ISO 8601 date or date-time ('2026-11-23', '2026-11-23T10:00:00Z', '...+01:00'), normalised to
 * UTC; without an offset it is UTC, whatever the server's zone. Validated here (also days that do
 * not exist, which Date.parse would roll over): Postgres would answer them with an error, not a 400.
 */
const ISO_DATETIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)(Z|[+-]\d{2}:?\d{2})?)?$/;
function parseDatetime(value: string): string {
  const m = ISO_DATETIME.exec(value);
  if (!m) throw mismatched();
  const [, y, mo, d, time, zone] = m;
  const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  const t = Date.parse(`${y}-${mo}-${d}T${time ?? '00:00'}${zone ?? 'Z'}`);
  if (day.getUTCMonth() !== Number(mo) - 1 || day.getUTCDate() !== Number(d) || Number.isNaN(t)) throw mismatched();
  // Years 1-9999 only: Postgres has no year 0, and toISOString writes later years as '+010000'.
  const year = new Date(t).getUTCFullYear();
  if (year < 1 || year > 9999) throw mismatched();
  return new Date(t).toISOString();
}

/**
 * What Postgres accepts as a uuid: 32 hex digits, in any case, optionally with a hyphen after any
 * group of four and optionally in braces. Anything else it would answer with an error naming no
 * field.
 */
const UUID = /^(?:\{[0-9a-f]{4}(?:-?[0-9a-f]{4}){7}\}|[0-9a-f]{4}(?:-?[0-9a-f]{4}){7})$/i;

/** A filter value that would not match the column's type, refused naming the filter (`key`) as sent. */
function checkText(field: FieldDef, lookup: Lookup, key: string, part: string): string {
  if (field.choices && !field.choices.includes(part)) {
    const one = field.choices.map((c) => `'${c}'`).join(', ');
    throw errors.invalidInput(
      lookup === 'in'
        ? `The '${echoName(key)}' filter takes values among ${one}, separated by commas.`
        : `The '${echoName(key)}' filter takes one of ${one}.`,
    );
  }
  if (field.format === 'uuid' && !UUID.test(part)) {
    throw errors.invalidInput(
      lookup === 'in'
        ? `The '${echoName(key)}' filter takes UUIDs separated by commas, each like 6ba7b810-9dad-11d1-80b4-00c04fd430c8.`
        : `The '${echoName(key)}' filter takes a UUID, like 6ba7b810-9dad-11d1-80b4-00c04fd430c8.`,
    );
  }
  // No stored name or key holds a control character, and Postgres refuses NUL.
  if (hasControlCharacters(part))
    throw errors.invalidInput(`The '${echoName(key)}' filter takes text without control characters.`);
  return part;
}

function convert(field: FieldDef, lookup: Lookup, key: string, raw: string): Array<string | boolean> {
  if (lookup === 'isnull') return [parseBoolean(raw)];
  const parts = lookup === 'in' ? raw.split(',') : [raw];
  return parts.map((part) => {
    if (field.related) {
      const id = field.related.toId(part);
      if (id === null) throw mismatched();
      return id;
    }
    // `max` marks an integer column even where the API shows the value as a string (user ids).
    switch (field.max !== undefined ? 'integer' : field.type) {
      case 'integer': {
        if (!/^-?\d{1,20}$/.test(part)) throw mismatched();
        const n = BigInt(part);
        if (n > (field.max ?? 0n) || n < -(field.max ?? 0n)) throw mismatched();
        return n.toString();
      }
      case 'boolean':
        return parseBoolean(part);
      case 'datetime':
        return parseDatetime(part);
      default:
        return checkText(field, lookup, key, part);
    }
  });
}

function parseFilter(resource: ResourceDef, key: string, values: string[]): Filter | null {
  const bits = key.split('__');
  const fieldName = bits[0]!;
  let field = resource.fields[fieldName];
  if (!field) return null; // tastypie ignores query keys that are not fields
  let alias = field.alias ?? resource.alias;
  let shownName = fieldName;
  let rest = bits.slice(1);
  if (field.related && rest.length > 0 && field.related.resource().fields[rest[0]!]) {
    if (!field.filtering) throw errors.invalidInput(`The '${escapeHtml(fieldName)}' field does not allow filtering.`);
    const related = field.related;
    const relatedResource = related.resource();
    shownName = rest[0]!;
    field = relatedResource.fields[shownName]!;
    // A field of a table the related resource's own list joins is not reached through a chain.
    if (field.alias) throw errors.invalidInput(`The '${escapeHtml(shownName)}' field does not allow filtering.`);
    alias = related.alias;
    rest = rest.slice(1);
  }
  if (!field.filtering || !field.column)
    throw errors.invalidInput(`The '${escapeHtml(shownName)}' field does not allow filtering.`);
  if (rest.length > 1)
    throw errors.invalidInput(
      `'${echoName(rest.join('__'))}' is not an allowed filter on the '${escapeHtml(shownName)}' field.`,
    );
  const lookup = (rest[0] ?? 'exact') as Lookup;
  if (!ALL_LOOKUPS.has(lookup) || !field.filtering.includes(lookup)) {
    throw errors.invalidInput(
      `'${echoName(lookup)}' is not an allowed filter on the '${escapeHtml(shownName)}' field.`,
    );
  }
  const converted =
    lookup === 'in'
      ? values.flatMap((v) => convert(field, lookup, key, v))
      : convert(field, lookup, key, values[values.length - 1]!);
  return { alias, column: field.column, lookup, values: converted };
}

function parseOrdering(resource: ResourceDef, values: string[]): Ordering[] {
  return values.map((raw) => {
    const desc = raw.startsWith('-');
    const name = desc ? raw.slice(1) : raw;
    const field = resource.fields[name];
    if (!field) throw errors.invalidInput(`No matching '${echoName(name)}' field for ordering on.`);
    // A joined table's field does not order: the page is ordered outside the join (list-planner).
    if (!field.ordering || !field.column || field.alias)
      throw errors.invalidInput(`The '${escapeHtml(name)}' field does not allow ordering.`);
    return { alias: resource.alias, column: field.column, desc };
  });
}

function parseInteger(raw: string): bigint | null {
  const trimmed = raw.trim();
  return /^[+-]?\d+$/.test(trimmed) ? BigInt(trimmed) : null;
}

export function parseLimit(raw: string | undefined, defaultLimit: number, maxLimit: number): number {
  if (raw === undefined) return defaultLimit;
  const n = parseInteger(raw);
  if (n === null)
    throw errors.invalidInput(`Invalid limit '${escapeHtml(raw)}' provided. Please provide a positive integer.`);
  if (n < 0n)
    throw errors.invalidInput(`Invalid limit '${escapeHtml(raw)}' provided. Please provide a positive integer >= 0.`);
  return n === 0n || n > BigInt(maxLimit) ? maxLimit : Number(n);
}

export function parseOffset(raw: string | undefined): bigint {
  if (raw === undefined) return 0n;
  const n = parseInteger(raw);
  if (n === null) throw errors.invalidInput(`Invalid offset '${escapeHtml(raw)}' provided. Please provide an integer.`);
  if (n < 0n)
    throw errors.invalidInput(`Invalid offset '${escapeHtml(raw)}' provided. Please provide a positive integer >= 0.`);
  return n;
}

const lastOf = (params: QueryParams, key: string): string | undefined => {
  const found = params.filter(([k]) => k === key);
  return found.length ? found[found.length - 1]![1] : undefined;
};

export function parseListQuery(
  resource: ResourceDef,
  params: QueryParams,
  defaultLimit: number,
  maxLimit: number,
): ListQuery {
  const grouped = new Map<string, string[]>();
  for (const [k, v] of params) {
    if (RESERVED.has(k)) continue;
    grouped.set(k, [...(grouped.get(k) ?? []), v]);
  }
  const filters: Filter[] = [];
  for (const [key, values] of grouped) {
    const filter = parseFilter(resource, key, values);
    if (filter) filters.push(filter);
  }
  const orderValues = params.filter(([k]) => k === 'order_by').map(([, v]) => v);
  return {
    filters,
    ordering: parseOrdering(resource, orderValues),
    limit: parseLimit(lastOf(params, 'limit'), defaultLimit, maxLimit),
    offset: parseOffset(lastOf(params, 'offset')),
  };
}

/** The query string's pairs in their original order (express's parsed object loses order and repeats). */
export function queryPairs(originalUrl: string): QueryParams {
  const q = originalUrl.indexOf('?');
  if (q < 0) return [];
  try {
    return [...new URLSearchParams(originalUrl.slice(q + 1))];
  } catch {
    throw errors.invalidInput('The query string is malformed.');
  }
}
