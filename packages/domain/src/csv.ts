/**
 * RFC 4180 rows as Cairn's CSV answers write them: quoted fields may hold commas, doubled quotes
 * and line breaks; rows end with CRLF. `complete`: refuse text whose last row has no CRLF (an
 * answer cut off), rather than keep the partial row.
 */
export function parseCsv(text: string, { complete = false } = {}): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  if (field !== '' || row.length > 0) {
    if (complete) throw new Error(`unterminated CSV row: ${JSON.stringify(row)} ${field}`);
    rows.push([...row, field]);
  }
  return rows;
}
