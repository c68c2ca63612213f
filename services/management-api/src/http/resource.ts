import type { Lookup } from '../services/list-query';

/**
 * A resource's public shape, the single source for filtering, ordering, body rules and the
 * `/schema/` document, as a tastypie Resource's Meta would be.
 */
export type FieldType = 'integer' | 'float' | 'string' | 'boolean' | 'related' | 'list' | 'datetime' | 'dict';

export type { Lookup };

export const STRING_LOOKUPS: readonly Lookup[] = [
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
];
export const NUMBER_LOOKUPS: readonly Lookup[] = ['exact', 'in', 'gt', 'gte', 'lt', 'lte', 'isnull'];
export const EXACT_ONLY: readonly Lookup[] = ['exact'];
export const RELATED_LOOKUPS: readonly Lookup[] = ['exact', 'in', 'isnull'];

export interface FieldDef {
  type: FieldType;
  help: string;
  readonly?: boolean;
  /** Sent by clients but shown only in the response that set it (a password), never in a GET. */
  writeOnly?: boolean;
  /** Taken in a body, never in any answer (an imported password hash). */
  neverShown?: boolean;
  nullable?: boolean;
  unique?: boolean;
  default?: unknown;
  /** SQL column on the resource's own table, for filtering and ordering. */
  column?: string;
  filtering?: readonly Lookup[];
  /** Integer columns: the largest value the column holds (int4 or int8); filter values are checked against it. */
  max?: bigint;
  /**
   * An integer shown as a JSON number up to 2^53 - 1 and as a decimal string above (quotas); a
   * `dict` field: such integers as its values. Clients may send either.
   */
  bigNumber?: boolean;
  /** A string column of a stricter type: filter values must be in its format (a UUID column). */
  format?: 'uuid';
  /** A `list` of objects: each object's fields and their types (the OpenAPI document shows them). */
  itemFields?: Readonly<Record<string, 'integer' | 'float' | 'string'>>;
  /** The only values the field takes: a filter value outside them is refused (a state). */
  choices?: readonly string[];
  /**
   * The alias of a one-to-one table the list source joins that holds `column` (users' quota state);
   * the resource's own table when unset. Such a field filters, but neither orders nor is reached
   * through a related resource's chain.
   */
  alias?: string;
  ordering?: boolean;
  /** For related fields: the resource `__` chains into, its table alias, and how a value becomes an id. */
  related?: { resource: () => ResourceDef; alias: string; toId: (value: string) => string | null };
}

export interface ResourceDef {
  name: string;
  /** Alias of the resource's table in list queries. */
  alias: string;
  listMethods: readonly string[];
  detailMethods: readonly string[];
  fields: Record<string, FieldDef>;
}

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 1000;

/** Every resource's primary key is its `id` field, as in tastypie's ModelResources. */
const PRIMARY_KEY = 'id';

/** Tastypie's `/schema/` document for a resource. */
export function schemaDocument(resource: ResourceDef): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const filtering: Record<string, unknown> = {};
  const ordering: string[] = [];
  for (const [name, f] of Object.entries(resource.fields)) {
    fields[name] = {
      blank: f.default !== undefined || f.nullable === true,
      default: f.default === undefined ? 'No default provided.' : f.default,
      help_text: f.help,
      nullable: f.nullable ?? false,
      primary_key: name === PRIMARY_KEY,
      readonly: f.readonly ?? false,
      type: f.type === 'related' ? 'related' : f.type,
      unique: f.unique ?? false,
      // Django's default verbose name for a model field, which tastypie shows when none is set.
      verbose_name: name.replace(/_/g, ' '),
      ...(f.type === 'related' ? { related_type: 'to_one' } : {}),
    };
    if (f.filtering) filtering[name] = f.related ? 2 : [...f.filtering];
    if (f.ordering && !f.alias) ordering.push(name);
  }
  return {
    allowed_detail_http_methods: resource.detailMethods.map((m) => m.toLowerCase()),
    allowed_list_http_methods: resource.listMethods.map((m) => m.toLowerCase()),
    default_format: 'application/json',
    default_limit: DEFAULT_LIMIT,
    fields,
    filtering,
    ordering,
  };
}
