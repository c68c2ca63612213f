/**
 * What a list operation takes and gives, for the HTTP layer: it parses a query string into a
 * ListQuery (http/filters.ts) and renders a Page, without reaching below the services.
 */
export type { Filter, ListQuery, Lookup, Ordering, Page } from '../repositories/list-types';
