import type { IncomingMessage } from 'node:http';
import type { Deps } from '../deps';
import type { Endpoints } from '../keystone/documents';

/** The URLs a token document hands out now: call per answer (the object is swapped when the cluster changes). */
export function endpointsFor(deps: Deps): Endpoints {
  return deps.cluster.settings.endpoints;
}

/** A request header (`name` in lower case) as a string; a repeated one joined as Node joins it. */
export function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** A character past ASCII: only a header holding one can be UTF-8 read as latin1. */
const PAST_ASCII = /[\u0080-\uffff]/;

/** Node reads header bytes as latin1; clients send UTF-8 names. */
export function headerText(req: IncomingMessage, name: string): string | undefined {
  const raw = header(req, name);
  // ASCII reads the same either way: no buffer to make (every login reads two such headers).
  if (raw === undefined || !PAST_ASCII.test(raw)) return raw;
  const text = Buffer.from(raw, 'latin1').toString('utf8');
  return text.includes('\ufffd') ? raw : text;
}
