import type { Request, Response } from 'express';
import { buildMeta } from '../http/pagination';
import { parseListQuery, queryPairs, type ListQuery } from '../http/filters';
import { DEFAULT_LIMIT, MAX_LIMIT, type ResourceDef } from '../http/resource';
import { formatOf, send } from '../http/respond';
import type { JsonText } from '../resources/marks';
import type { Page } from '../services/list-query';

/**
 * A tastypie list response: parse filters/paging, fetch one page, wrap it in the envelope.
 * `representJson`, when given, writes a row's JSON text directly for JSON answers (same text as
 * `represent` through toJson).
 */
export async function sendList<T>(
  req: Request,
  res: Response,
  resource: ResourceDef,
  listPath: string,
  fetch: (query: ListQuery) => Promise<Page<T>>,
  represent: (row: T) => object,
  representJson?: (row: T) => JsonText,
  /**
   * Query parameters the route reads itself (a filter the planner cannot express): not parsed as filters, kept in the
   * paging links.
   */
  routeParams: readonly string[] = [],
): Promise<void> {
  const params = queryPairs(req.originalUrl);
  const query = parseListQuery(
    resource,
    routeParams.length ? params.filter(([k]) => !routeParams.includes(k)) : params,
    DEFAULT_LIMIT,
    MAX_LIMIT,
  );
  const page = await fetch(query);
  send(req, res, 200, {
    meta: buildMeta(listPath, params, query.limit, query.offset, page.total),
    objects: representJson && formatOf(req) === 'json' ? page.rows.map(representJson) : page.rows.map(represent),
  });
}
