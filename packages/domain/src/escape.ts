/**
 * Values echoed back in messages are HTML-escaped, as tastypie does (`<`, `>`, `&`), so nothing a
 * client sent is ever reflected as markup.
 */
export const escapeHtml = (value: string): string =>
  value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The longest name (of a field, filter or element a client sent) a message echoes whole. */
export const MAX_ECHOED_NAME = 64;

/** A name cut to MAX_ECHOED_NAME characters, with '…' when it was longer. */
export function truncateName(name: string): string {
  const chars = [...name];
  return chars.length > MAX_ECHOED_NAME ? `${chars.slice(0, MAX_ECHOED_NAME).join('')}…` : name;
}

/**
 * A name the client sent, as a message shows it: cut (truncateName) and HTML-escaped. A body of
 * the wrong type read as a form is one long "name", which may hold a password; it is never echoed
 * back at length.
 */
export const echoName = (name: string): string => escapeHtml(truncateName(name));
