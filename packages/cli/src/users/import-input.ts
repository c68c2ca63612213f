import { parse } from 'csv-parse/sync';

/**
 * The users a `cairn users import` reads, from a file (CSV with a header line, or JSON lines) or
 * from tempauth's configuration (import-tempauth.ts). Each carries where it came from, so every
 * refusal and outcome names its line.
 */
export interface ImportRecord {
  /** "line 12", or the tempauth option it came from. */
  where: string;
  /** The fields as given (validated later, by the API's own rules: see import.ts). */
  fields: Record<string, unknown>;
}

export interface Refusal {
  where: string;
  reason: string;
}

export interface ImportInput {
  records: ImportRecord[];
  refused: Refusal[];
}

/** The columns or keys a line may have. */
export const IMPORT_FIELDS = ['user', 'password', 'password_hash', 'is_superuser', 'enabled'] as const;

/** Unknown keys are refused by line, not silently dropped (a typo in `pasword_hash` would lose it). */
function checkKeys(fields: Record<string, unknown>): string | null {
  const unknown = Object.keys(fields).filter((k) => !(IMPORT_FIELDS as readonly string[]).includes(k));
  return unknown.length
    ? `unknown field(s) ${unknown.map((k) => `'${k}'`).join(', ')}; the fields are ${IMPORT_FIELDS.join(', ')}.`
    : null;
}

/** One JSON object a line; blank lines are skipped. */
function parseJsonLines(text: string): ImportInput {
  const out: ImportInput = { records: [], refused: [] };
  text.split(/\r?\n/).forEach((line, i) => {
    const where = `line ${i + 1}`;
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      out.refused.push({ where, reason: 'not a JSON object (each line of a JSON lines file is one object).' });
      return;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      out.refused.push({ where, reason: 'not a JSON object (each line of a JSON lines file is one object).' });
      return;
    }
    const fields = value as Record<string, unknown>;
    const bad = checkKeys(fields);
    if (bad) out.refused.push({ where, reason: bad });
    else out.records.push({ where, fields });
  });
  return out;
}

/** CSV with a header line naming the columns; an empty cell is an absent field. */
function parseCsv(text: string): ImportInput {
  const out: ImportInput = { records: [], refused: [] };
  let header: string[] = [];
  const rows = parse(text, {
    bom: true,
    info: true,
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    on_skip: (err) => {
      if (err)
        out.refused.push({
          where: `line ${(err as { lines?: number }).lines ?? '?'}`,
          reason: `not valid CSV: ${err.message}`,
        });
      return undefined;
    },
  }) as unknown as Array<{ record: string[]; info: { lines: number } }>;
  rows.forEach(({ record, info }, i) => {
    if (i === 0) {
      header = record.map((c) => c.trim());
      const bad = checkKeys(Object.fromEntries(header.map((h) => [h, true])));
      if (bad) throw new Error(`the header line has ${bad}`);
      if (!header.includes('user'))
        throw new Error("the header line must name a 'user' column (and password or password_hash).");
      return;
    }
    const where = `line ${info.lines}`;
    if (record.length !== header.length) {
      out.refused.push({ where, reason: `${record.length} field(s), but the header names ${header.length}.` });
      return;
    }
    const fields: Record<string, unknown> = {};
    header.forEach((h, c) => {
      if (record[c] !== '') fields[h] = record[c];
    });
    out.records.push({ where, fields });
  });
  return out;
}

/** JSON lines when the first non-blank character is `{`, else CSV. */
export function parseImportFile(text: string): ImportInput {
  return /^\s*\{/.test(text) ? parseJsonLines(text) : parseCsv(text);
}
