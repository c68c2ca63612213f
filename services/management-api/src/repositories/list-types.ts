/**
 * What a list asks for, independent of how it arrived: the HTTP layer parses query strings into
 * these (http/filters.ts), the list planner (list-planner.ts) turns them into SQL. Column names and
 * aliases come only from resource definitions, never from a request; values are always bound.
 */

export type Lookup =
  | 'exact'
  | 'iexact'
  | 'in'
  | 'startswith'
  | 'istartswith'
  | 'contains'
  | 'icontains'
  | 'gt'
  | 'gte'
  | 'lt'
  | 'lte'
  | 'isnull';

export interface Filter {
  /** The table alias: the resource's own, or a related resource's (`cluster__name` → clusters). */
  alias: string;
  column: string;
  lookup: Lookup;
  /** One value, or several for `in`. Integers travel as decimal strings (bigint-safe). */
  values: Array<string | boolean>;
  /**
   * The column compares byte by byte (COLLATE "C"), so the values starting with a prefix are one
   * range of it: `startswith` is sent as `column >= prefix AND column < next`, bounds a prepared
   * statement's generic plan still scans the index by (a LIKE pattern bounds the scan only when
   * its value is known at planning). Set by the list planner, never by a request.
   */
  byteOrdered?: boolean;
}

export interface Ordering {
  alias: string;
  column: string;
  desc: boolean;
}

export interface ListQuery {
  filters: Filter[];
  ordering: Ordering[];
  limit: number;
  offset: bigint;
}

export interface Page<T> {
  /** Exact number of rows the filters match. */
  total: number;
  rows: T[];
}
