/**
 * Where `value` has a field named `__proto__`, labelled as joi labels a field (`__proto__`,
 * `samples[0].__proto__`). JSON.parse and the form and XML parsers keep such a key as an ordinary
 * field, but joi drops it when it copies an object, so without this check it would pass as if it
 * had never been sent. Walked without recursion: a body may nest deeply.
 */
export function protoKeyLabels(value: unknown): string[] {
  interface At {
    value: unknown;
    key: string | number | null;
    parent: At | null;
  }
  const labelOf = (at: At): string => {
    const parts: Array<string | number> = [];
    for (let a: At | null = at; a && a.key !== null; a = a.parent) parts.unshift(a.key);
    return parts.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
  };
  const isContainer = (v: unknown): v is object => typeof v === 'object' && v !== null;
  const found: At[] = [];
  const stack: At[] = isContainer(value) ? [{ value, key: null, parent: null }] : [];
  while (stack.length > 0) {
    const at = stack.pop()!;
    const v = at.value as object;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) if (isContainer(v[i])) stack.push({ value: v[i], key: i, parent: at });
      continue;
    }
    for (const key of Object.keys(v)) {
      const child = (v as Record<string, unknown>)[key];
      if (key === '__proto__') found.push({ value: child, key, parent: at });
      else if (isContainer(child)) stack.push({ value: child, key, parent: at });
    }
  }
  return found.map(labelOf);
}
