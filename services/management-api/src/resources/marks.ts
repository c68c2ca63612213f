/**
 * Marks on values that the wire formats (http/serialize.ts) render specially. They live apart from
 * the serialiser so that representations can be built where no HTTP code is imported.
 */

const RESOURCE = Symbol('tastypie.resource');

/** Marks a plain object as a resource, so XML renders it as `<object>` rather than `<object type="hash">`. */
export function asResource<T extends object>(value: T): T {
  Object.defineProperty(value, RESOURCE, { value: true, enumerable: false });
  return value;
}
export const isResource = (value: object): boolean => (value as Record<symbol, unknown>)[RESOURCE] === true;

/**
 * JSON text already in toJson's form (keys sorted, Python's separators), emitted as is: a list's
 * rows can be written straight from their fields, without an object per row to build, mark, walk
 * and collect. Only for JSON answers; XML needs the objects.
 */
export class JsonText {
  constructor(readonly text: string) {}
}
