import type { Request, Response } from 'express';
import { CONTENT_TYPES, negotiateFormat, type Format } from './negotiate';
import { toJson, toXml } from './serialize';

/** The response format for this request; a bad Accept header falls back to JSON for the error itself. */
export function formatOf(req: Request): Format {
  try {
    return negotiateFormat(req.query.format, req.get('accept'));
  } catch {
    return 'json';
  }
}

export function send(req: Request, res: Response, status: number, body: unknown): void {
  const format = formatOf(req);
  const payload = format === 'xml' ? toXml(body) : toJson(body);
  // setHeader and a Buffer keep express from appending '; charset=utf-8' to JSON (tastypie sends it bare).
  res.status(status).setHeader('Content-Type', CONTENT_TYPES[format]);
  res.send(Buffer.from(payload, 'utf8'));
}
