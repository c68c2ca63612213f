import type { Request, Response } from 'express';

/**
 * CSV answers (RFC 4180): a header row, CRLF line ends, fields quoted when they hold a comma, a
 * quote, CR or LF (quotes doubled). Rows are written as they are read, waiting for the socket to
 * drain, so an export's size never sits in memory. Every CSV the API writes goes through csvField.
 */
export const CSV_TYPE = 'text/csv; charset=utf-8; header=present';

/**
 * Spreadsheets run a cell that starts with one of these as a formula (`=HYPERLINK(…)` becomes a
 * live link). Text cells can hold names from outside (account names, from proxy logs among others).
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One cell. Numbers are written bare, negative ones too (they must stay numbers). A text cell that
 * a spreadsheet would run as a formula is written as text, as OWASP's CSV-injection rule says: a
 * single quote before it, and the cell quoted.
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  const s = value instanceof Date ? value.toISOString() : String(value);
  if (FORMULA_START.test(s)) return `"'${s.replace(/"/g, '""')}"`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const csvLine = (fields: readonly unknown[]): string => `${fields.map(csvField).join(',')}\r\n`;

/**
 * Whether the client asked for CSV: `?format=csv`, or no `format` and an Accept header that
 * prefers text/csv to JSON and XML. Other answers (errors included) keep the usual negotiation.
 */
export function wantsCsv(req: Request): boolean {
  const format = req.query.format;
  if (format === 'csv') return true;
  if (format === 'json' || format === 'xml') return false;
  const accept = req.get('accept');
  if (!accept) return false;
  let csv = 0;
  let other = 0;
  for (const part of accept.split(',')) {
    const [range, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!Number.isFinite(q)) continue;
    if (range === 'text/csv') csv = Math.max(csv, q);
    else if (range === 'application/json' || range === 'application/xml' || range === 'text/xml')
      other = Math.max(other, q);
  }
  return csv > 0 && csv > other;
}

/**
 * Resolves when the response can take more, or is closed: a client that goes away never drains.
 * Both listeners go once either fires, so a long export does not pile them up.
 */
function drained(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Streams `header` and then every row the batches yield. Once the header is out the status is
 * sent: a failure after that cuts the connection, so a client never takes a truncated export for
 * a whole one (chunked encoding ends without its last chunk).
 */
export async function streamCsv(
  res: Response,
  filename: string,
  header: readonly string[],
  batches: AsyncIterable<ReadonlyArray<readonly unknown[]>>,
): Promise<void> {
  res.statusCode = 200;
  res.setHeader('Content-Type', CSV_TYPE);
  res.setHeader('Content-Disposition', `attachment; filename="${filename.replace(/[^\w.-]/g, '_')}"`);
  const write = async (text: string) => {
    if (!res.write(text, 'utf8')) await drained(res);
  };
  try {
    await write(csvLine(header));
    for await (const rows of batches) {
      if (res.destroyed) return;
      let chunk = '';
      for (const row of rows) chunk += csvLine(row);
      await write(chunk);
    }
    res.end();
  } catch (e) {
    res.destroy(e instanceof Error ? e : new Error(String(e)));
  }
}
