import type { Schema as JoiSchema } from 'joi';
import type { JsonSchema } from './schemas';

/**
 * A JSON Schema from a joi schema's own description, for request bodies that have no resource
 * definition (the self-service ones): the joi schema that validates the body is then the one
 * place its shape is declared. Covers what those bodies use: objects, strings (length, pattern,
 * allowed values), ISO dates, booleans, numbers and arrays; anything else is left open.
 */
export function jsonSchemaOfJoi(schema: JoiSchema): JsonSchema {
  return fromDescription(schema.describe() as Described);
}

interface Described {
  type: string;
  flags?: { presence?: string; only?: boolean; default?: unknown; result?: string; description?: string };
  allow?: unknown[];
  rules?: Array<{ name: string; args?: Record<string, unknown> }>;
  keys?: Record<string, Described>;
  items?: Described[];
}

function fromDescription(d: Described): JsonSchema {
  const arg = (name: string, key: string): unknown => d.rules?.find((r) => r.name === name)?.args?.[key];
  const out: JsonSchema = {};
  let type: string | undefined;
  switch (d.type) {
    case 'object': {
      type = 'object';
      const properties: Record<string, JsonSchema> = {};
      const required: string[] = [];
      for (const [name, key] of Object.entries(d.keys ?? {})) {
        if (key.flags?.presence === 'forbidden') continue;
        // Taken and dropped (a rule's `id` sent back from a GET): allowed, and said to mean nothing.
        properties[name] =
          key.flags?.result === 'strip' ? { description: 'Accepted and ignored.' } : fromDescription(key);
        if (key.flags?.presence === 'required') required.push(name);
      }
      Object.assign(out, { properties, ...(required.length ? { required } : {}), additionalProperties: false });
      break;
    }
    case 'string': {
      type = 'string';
      const min = arg('min', 'limit');
      const max = arg('max', 'limit');
      const regex = arg('pattern', 'regex');
      if (typeof min === 'number') out.minLength = min;
      if (typeof max === 'number') out.maxLength = max;
      if (typeof regex === 'string') out.pattern = regex.replace(/^\/(.*)\/[a-z]*$/s, '$1');
      break;
    }
    case 'date':
      type = 'string';
      out.format = 'date-time';
      break;
    case 'boolean':
      type = 'boolean';
      break;
    case 'number':
      type = arg('integer', 'limit') !== undefined || d.rules?.some((r) => r.name === 'integer') ? 'integer' : 'number';
      break;
    case 'array': {
      type = 'array';
      if (d.items?.[0]) out.items = fromDescription(d.items[0]);
      const max = arg('max', 'limit');
      if (typeof max === 'number') out.maxItems = max;
      break;
    }
    default:
      break;
  }
  const allowed = (d.allow ?? []).filter((v) => v !== null);
  const nullable = (d.allow ?? []).includes(null);
  if (d.flags?.only && allowed.length) out.enum = nullable ? [...allowed, null] : allowed;
  if (type) out.type = nullable ? [type, 'null'] : type;
  if (d.flags?.default !== undefined && typeof d.flags.default !== 'function') out.default = d.flags.default;
  return out;
}
