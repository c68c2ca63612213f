/**
 * The path a request is logged under. Keystone V2 validation carries the token in the path
 * (`GET /v2.0/tokens/<token>`), and a token must never reach a log line: it is shown as `[token]`.
 */
export const logPath = (path: string): string => path.replace(/(\/v2\.0\/tokens\/)[^/]+/, '$1[token]');
