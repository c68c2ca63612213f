import { Option, type Command } from 'commander';

export const FORMATS = ['table', 'json', 'yaml', 'csv'] as const;
export type Format = (typeof FORMATS)[number];

export interface OutputOptions {
  output: Format;
  quiet?: boolean;
}

/** `-o table|json|yaml|csv` and `-q` on a command that prints resources. */
export function withOutput(cmd: Command): Command {
  return cmd
    .addOption(new Option('-o, --output <format>', 'output format').choices(FORMATS).default('table'))
    .option('-q, --quiet', 'print only the ids, one a line');
}

type Row = Record<string, unknown>;

const cell = (v: unknown): string =>
  v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);

/** RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled. */
const csvField = (v: unknown): string => {
  const s = cell(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/** Rows as aligned columns under upper-case headers. */
export function table(rows: Row[], columns: string[]): string {
  const cells = rows.map((r) => columns.map((c) => cell(r[c]).replace(/[\r\n\t]/g, ' ')));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n') + '\n';
}

/**
 * Prints resources in the chosen format. `columns` are what the table and CSV show (JSON and YAML
 * show every field the API answered); `-q` prints only `idField`.
 */
export async function render(
  data: Row | Row[],
  columns: string[],
  opts: OutputOptions,
  idField = 'id',
): Promise<string> {
  const rows = Array.isArray(data) ? data : [data];
  if (opts.quiet) return rows.map((r) => `${cell(r[idField])}\n`).join('');
  switch (opts.output) {
    case 'json':
      return `${JSON.stringify(data, null, 2)}\n`;
    case 'yaml':
      // yaml loads for -o yaml alone: every other call of every command is spared it.
      return (await import('yaml')).default.stringify(data);
    case 'csv':
      return (
        [columns.join(','), ...rows.map((r) => columns.map((c) => csvField(r[c])).join(','))].join('\r\n') + '\r\n'
      );
    default:
      return table(rows, columns);
  }
}
