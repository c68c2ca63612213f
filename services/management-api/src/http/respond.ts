import type { Request, Response } from 'express';
import { CONTENT_TYPES, negotiateFormat, type Format } from './negotiate';
import { toJson, toXml } from './serialize';

const FORMAT = Symbol('cairn.format');
type Negotiated = Request & { [FORMAT]?: Format };

/**
 * Negotiates the format once, up front (a malformed Accept header throws: 400), and keeps it on the
 * request so the answer does not parse the query string and the Accept header again.
 */
export function negotiateOnce(req: Request): void {
  (req as Negotiated)[FORMAT] = negotiateFormat(formatParam(req), req.headers.accept);
}

/**
 * `?format=` as express reads it. express parses the whole query string at every read of
 * req.query, so it is read only when the query string can hold that key (spelt out, or
 * percent-encoded).
 */
function formatParam(req: Request): unknown {
  const url = req.url;
  const q = url.indexOf('?');
  return q >= 0 && (url.includes('format', q) || url.includes('%', q)) ? req.query.format : undefined;
}

/** The response format for this request; a bad Accept header falls back to JSON for the error itself. */
export function formatOf(req: Request): Format {
  const known = (req as Negotiated)[FORMAT];
  if (known) return known;
  try {
    return negotiateFormat(formatParam(req), req.headers.accept);
  } catch {
    return 'json';
  }
}

/**
 * Writes the answer with Node's own response methods, not express's res.send: with no ETag and no
 * Last-Modified, res.send only adds work here (type checks, a Buffer copy, a freshness check that
 * can never answer 304). A string body with its Content-Length lets Node write headers and body in
 * one write; a HEAD request gets the headers only (Node drops the body). setHeader also keeps
 * '; charset=utf-8' off JSON (tastypie sends it bare).
 */
export function send(req: Request, res: Response, status: number, body: unknown): void {
  const format = formatOf(req);
  const payload = format === 'xml' ? toXml(body) : toJson(body);
  res.statusCode = status;
  res.setHeader('Content-Type', CONTENT_TYPES[format]);
  res.setHeader('Content-Length', Buffer.byteLength(payload, 'utf8'));
  res.end(payload, 'utf8');
}

/**
 * An answer that carries a secret (a password just set, a new API key, an S3 secret), shown once:
 * no cache or proxy may keep a copy.
 */
export function sendSecret(req: Request, res: Response, status: number, body: unknown): void {
  res.setHeader('Cache-Control', 'no-store');
  send(req, res, status, body);
}
