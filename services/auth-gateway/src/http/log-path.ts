/**
 * The path a request is logged under. Keystone V2 validation carries the token in the path
 * (`GET /v2.0/tokens/<token>`), and a token must never reach a log line: it is shown as `[token]`.
 * express matches routes case-insensitively and a client may double a slash, so any segment after
 * a `tokens` segment is replaced however the path is spelt, and whether or not a route matched it
 * (a token sent to a wrong path is still a live token).
 */
export const logPath = (path: string): string => path.replace(/(\/tokens\/+)[^/?#]+/gi, '$1[token]');
