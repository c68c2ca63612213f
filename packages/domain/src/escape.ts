/**
 * Values echoed back in messages are HTML-escaped, as tastypie does (`<`, `>`, `&`), so nothing a
 * client sent is ever reflected as markup.
 */
export const escapeHtml = (value: string): string => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
