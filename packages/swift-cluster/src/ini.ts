/**
 * The subset of Python's `configparser.ConfigParser(strict=False)` that Swift uses to read swift.conf,
 * with the same rules: `[section]` headers (names are case-sensitive), `key = value` or `key: value`
 * (split at the first `=` or `:`; keys are lower-cased and stripped), whole-line comments starting
 * with `#` or `;` (no inline comments: `a = b # c` has the value `b # c`), values continued on
 * lines indented deeper than their key, a `[DEFAULT]` section whose keys every section inherits,
 * repeated sections merged and repeated keys overwritten, and `%(key)s` / `%%` interpolation.
 */

export class IniError extends Error {
  override readonly name = 'IniError';
}

export interface IniFile {
  /** Keys of `[DEFAULT]`, inherited by every section. */
  defaults: Map<string, string>;
  /** Sections in order of first appearance; values not yet interpolated. */
  sections: Map<string, Map<string, string>>;
}

const DEFAULT_SECTION = 'DEFAULT';
const SECTION_RE = /^\[(.+)\]/;
const OPTION_RE = /^(.*?)\s*([=:])\s*(.*)$/;
const MAX_INTERPOLATION_DEPTH = 10;

/**
 * `keepKeyCase`: keys as written, as paste.deploy reads a proxy-server.conf (its parser sets
 * `optionxform = str`); swift.conf's plain ConfigParser lower-cases them.
 */
export function parseIni(text: string, options: { keepKeyCase?: boolean } = {}): IniFile {
  const defaults = new Map<string, string[]>();
  const sections = new Map<string, Map<string, string[]>>();
  const bad: string[] = [];
  let current: Map<string, string[]> | undefined;
  let option: string | undefined;
  let indentLevel = 0;

  const lines = text.split(/\r\n|\r|\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  lines.forEach((line, i) => {
    const lineNo = i + 1;
    const isComment = /^\s*[#;]/.test(line);
    const value = isComment ? '' : line.trim();
    if (value === '') {
      // Blank lines belong to a value being continued (trailing ones are stripped at the end);
      // comment lines do not.
      if (!isComment && current && option !== undefined) current.get(option)?.push('');
      return;
    }
    const indent = line.search(/\S/);
    if (current && option !== undefined && indent > indentLevel) {
      current.get(option)?.push(value);
      return;
    }
    indentLevel = indent;
    const header = SECTION_RE.exec(value);
    if (header) {
      const name = header[1] as string;
      if (name === DEFAULT_SECTION) {
        current = defaults;
      } else {
        current = sections.get(name);
        if (!current) {
          current = new Map();
          sections.set(name, current);
        }
      }
      option = undefined;
      return;
    }
    if (!current) throw new IniError(`line ${lineNo}: ${JSON.stringify(line)} comes before any [section] header`);
    const match = OPTION_RE.exec(value);
    if (!match || match[1] === '') {
      bad.push(`line ${lineNo}: ${JSON.stringify(line)}`);
      return;
    }
    option = options.keepKeyCase ? (match[1] as string).trimEnd() : (match[1] as string).trimEnd().toLowerCase();
    current.set(option, [(match[3] as string).trim()]);
  });
  if (bad.length > 0)
    throw new IniError(`cannot parse ${bad.join(', ')} (expected "key = value" or a [section] header)`);

  const join = (raw: Map<string, string[]>) => new Map([...raw].map(([k, v]) => [k, v.join('\n').trimEnd()] as const));
  return {
    defaults: join(defaults),
    sections: new Map([...sections].map(([name, raw]) => [name, join(raw)] as const)),
  };
}

/**
 * A section's options as `ConfigParser.items(section)` gives them: `[DEFAULT]` keys first, then the
 * section's own (overriding), every value interpolated (`%(key)s` from the same set, `%%` for `%`).
 */
export function sectionItems(ini: IniFile, section: string): Map<string, string> {
  const own = ini.sections.get(section);
  if (!own) throw new IniError(`no section [${section}]`);
  const vars = new Map([...ini.defaults, ...own]);
  const result = new Map<string, string>();
  for (const [key, raw] of vars) result.set(key, interpolate(raw, vars, section, key, 1));
  return result;
}

function interpolate(raw: string, vars: Map<string, string>, section: string, key: string, depth: number): string {
  if (depth > MAX_INTERPOLATION_DEPTH)
    throw new IniError(`[${section}] ${key}: interpolation nested deeper than ${MAX_INTERPOLATION_DEPTH}`);
  let out = '';
  let rest = raw;
  while (rest !== '') {
    const p = rest.indexOf('%');
    if (p < 0) return out + rest;
    out += rest.slice(0, p);
    rest = rest.slice(p);
    if (rest.startsWith('%%')) {
      out += '%';
      rest = rest.slice(2);
    } else if (rest.startsWith('%(')) {
      const ref = /^%\(([^)]+)\)s/.exec(rest);
      if (!ref) throw new IniError(`[${section}] ${key}: bad interpolation variable reference ${JSON.stringify(rest)}`);
      const name = (ref[1] as string).toLowerCase();
      const value = vars.get(name);
      if (value === undefined)
        throw new IniError(`[${section}] ${key}: interpolation refers to missing option ${JSON.stringify(name)}`);
      rest = rest.slice(ref[0].length);
      out += value.includes('%') ? interpolate(value, vars, section, key, depth + 1) : value;
    } else {
      throw new IniError(`[${section}] ${key}: '%' must be followed by '%' or '(', found ${JSON.stringify(rest)}`);
    }
  }
  return out;
}
