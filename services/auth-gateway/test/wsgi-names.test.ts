import { asText, asWsgiString } from '../src/keystone/wsgi-names';

describe('identity strings spelt for a Python 3 Swift proxy', () => {
  it('when a name is ASCII, then the WSGI spelling is the name itself', () => {
    for (const name of ['alice', "o'brien+tag@example.com", 'first last.name', 'what?#%41&x=1;y', 'default']) {
      expect(asWsgiString(name)).toBe(name);
    }
  });

  it('when a name has Latin-1 letters, then each UTF-8 byte becomes one latin-1 character, as Swift holds `/v1/AUTH_zo%C3%AB`', () => {
    expect(asWsgiString('zoë')).toBe('zo\u00c3\u00ab');
    expect(asWsgiString('Ærø')).toBe('\u00c3\u0086r\u00c3\u00b8');
  });

  it('when any name is spelt, then every character is one byte and reading the bytes as UTF-8 gives the name back', () => {
    for (const name of ['zoë', 'Ærøskøbing ÿ©', '用户', 'party🎉user', 'ü'.repeat(251)]) {
      const spelt = asWsgiString(name);
      expect([...spelt].every((c) => c.charCodeAt(0) <= 0xff)).toBe(true);
      expect(spelt).toHaveLength(Buffer.byteLength(name, 'utf8'));
      expect(Buffer.from(spelt, 'latin1').toString('utf8')).toBe(name);
    }
  });

  it('when a name is spelt as text, then it is unchanged', () => {
    expect(asText('zoë')).toBe('zoë');
  });
});
