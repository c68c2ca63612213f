import type { ServerResponse } from 'node:http';

/**
 * Answers written with Node's own response API (cheaper than express's `send`, which also computes
 * ETags and checks freshness), with the headers express's `send` and `json` would give (a
 * Content-Length; the charset in lower case).
 */
export function sendText(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  sendText(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}
