import { errors, escapeHtml } from '@cairn/domain';
import { API_ROOT, clusterIdFromRef } from '../resources/uris';

/**
 * GET-modify-PATCH: a client may send back an object as it read it, read-only fields included.
 * A read-only field equal to its current value is dropped before validation; one that differs is
 * refused with a 400 naming it (the same sentence the schemas give for a read-only field).
 *
 * "Equal" is judged as a client would mean it: an id as a number or a decimal string, a related
 * object as a resource URI (with or without scheme, host or trailing slash) or a bare id.
 */
export type SameAs = (given: unknown) => boolean;

export function dropUnchangedReadOnly(
  body: Record<string, unknown>,
  current: Record<string, SameAs>,
): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(body)) {
    const same = Object.hasOwn(current, field) ? current[field]! : undefined;
    if (!same) {
      // Defined, not assigned: a field named __proto__ stays a field, which validation refuses.
      Object.defineProperty(kept, field, { value, enumerable: true, writable: true, configurable: true });
      continue;
    }
    if (!same(value)) throw errors.invalidInput(`The '${escapeHtml(field)}' field is read-only and cannot be changed.`);
  }
  return kept;
}

/** An integer id given as a JSON number or a decimal string. */
export const sameId =
  (current: number | string): SameAs =>
  (given) => {
    const text =
      typeof given === 'number' && Number.isSafeInteger(given)
        ? String(given)
        : typeof given === 'string'
          ? given.trim()
          : null;
    return text !== null && /^\d{1,19}$/.test(text) && BigInt(text) === BigInt(current);
  };

export const sameText =
  (current: string): SameAs =>
  (given) =>
    given === current;

/** UUIDs are compared as the API stores them: lower case. */
export const sameUuid =
  (current: string): SameAs =>
  (given) =>
    typeof given === 'string' && given.trim().toLowerCase() === current.toLowerCase();

/** A resource URI, absolute or not, with or without its trailing slash. */
export const sameUri =
  (current: string): SameAs =>
  (given) => {
    if (typeof given !== 'string') return false;
    const path = given.trim().replace(/^https?:\/\/[^/]+(?=\/)/i, '');
    return path.startsWith(`${API_ROOT}/`) && (path.endsWith('/') ? path : `${path}/`) === current;
  };

/** The cluster a user belongs to, as its resource URI or its id. */
export const sameCluster =
  (current: number): SameAs =>
  (given) =>
    clusterIdFromRef(given) === current;

/** A reported value (a status) that a client sending an object back cannot mean to change: always dropped. */
export const anyValue: SameAs = () => true;
