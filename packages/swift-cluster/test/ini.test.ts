import { IniError, parseIni, sectionItems } from '../src/ini';

describe('parseIni (ConfigParser rules)', () => {
  it('when a file has sections, keys and comments, then keys are lower-cased and values stripped', () => {
    const ini = parseIni('# top\n[a]\nKey = Value \n; c\nother:  x = y\n[B]\nk=v\n');
    expect([...ini.sections.keys()]).toEqual(['a', 'B']);
    expect(Object.fromEntries(ini.sections.get('a') ?? [])).toEqual({ key: 'Value', other: 'x = y' });
    expect(Object.fromEntries(ini.sections.get('B') ?? [])).toEqual({ k: 'v' });
  });

  it('when a value continues over indented and blank lines, then they are joined and trailing blanks dropped', () => {
    const ini = parseIni('[a]\nk = one\n  two\n\n   three\n\n[b]\n');
    expect(ini.sections.get('a')?.get('k')).toBe('one\ntwo\n\nthree');
  });

  it('when a comment line sits inside a continued value, then it is not part of it', () => {
    expect(parseIni('[a]\nk = one\n  # note\n  two\n').sections.get('a')?.get('k')).toBe('one\ntwo');
  });

  it('when a key is empty after the delimiter, then the value is empty', () => {
    expect(parseIni('[a]\nk =\n').sections.get('a')?.get('k')).toBe('');
  });

  it('when [DEFAULT] is present, then every section inherits its keys (own keys win)', () => {
    const ini = parseIni('[DEFAULT]\nx = 1\ny = 2\n[a]\ny = 3\n');
    expect(Object.fromEntries(sectionItems(ini, 'a'))).toEqual({ x: '1', y: '3' });
    expect(ini.sections.has('DEFAULT')).toBe(false);
  });

  it('when values refer to others with %(key)s, then they are interpolated, recursively, %% being a %', () => {
    const ini = parseIni('[DEFAULT]\nbase = /srv\n[a]\ndir = %(base)s/node\nfull = %(DIR)s/sdb1 100%%\n');
    expect(sectionItems(ini, 'a').get('full')).toBe('/srv/node/sdb1 100%');
  });

  it.each([
    ['[a]\nk = %(missing)s\n', 'interpolation refers to missing option "missing"'],
    ['[a]\nk = %(x\n', 'bad interpolation variable reference'],
    ['[a]\nk = %(k)s\n', 'interpolation nested deeper than 10'],
  ])('when interpolation in %j cannot work, then it is an error', (text, message) => {
    expect(() => sectionItems(parseIni(text), 'a')).toThrow(message);
  });

  it('when a line has no delimiter, then it is reported with its number', () => {
    expect(() => parseIni('[a]\nk = v\nnovalue\n')).toThrow(
      new IniError('cannot parse line 3: "novalue" (expected "key = value" or a [section] header)'),
    );
  });
});
