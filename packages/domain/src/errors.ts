/**
 * Domain errors carry a stable `code` that clients and the HTTP layer can rely on;
 * the mapping from code to HTTP status lives in each service's http/errors.ts, once.
 */
export type ErrorCode =
  | 'INVALID_INPUT'
  | 'NOT_FOUND'
  | 'ALREADY_EXISTS'
  | 'IN_USE'
  | 'CONFLICT'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'METHOD_NOT_ALLOWED'
  | 'NOT_ACCEPTABLE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'PAYLOAD_TOO_LARGE'
  | 'TOO_MANY_REQUESTS'
  | 'UNAVAILABLE';

export class CairnError extends Error {
  override readonly name = 'CairnError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export const isCairnError = (e: unknown): e is CairnError => e instanceof CairnError;

export const errors = {
  invalidInput: (message: string, details?: Record<string, unknown>) =>
    new CairnError('INVALID_INPUT', message, details),
  notFound: (message: string, details?: Record<string, unknown>) => new CairnError('NOT_FOUND', message, details),
  alreadyExists: (message: string, details?: Record<string, unknown>) =>
    new CairnError('ALREADY_EXISTS', message, details),
  inUse: (message: string, details?: Record<string, unknown>) => new CairnError('IN_USE', message, details),
  /** The request is well-formed but the state of what it names forbids it (no earlier ring to roll back to). */
  conflict: (message: string) => new CairnError('CONFLICT', message),
  unauthenticated: (message = 'Authentication required: send "Authorization: ApiKey <operator>:<key>".') =>
    new CairnError('UNAUTHENTICATED', message),
  forbidden: (message: string) => new CairnError('FORBIDDEN', message),
  methodNotAllowed: (allowed: readonly string[]) =>
    new CairnError('METHOD_NOT_ALLOWED', `Method not allowed. Allowed: ${allowed.join(',')}`, { allowed }),
  notAcceptable: (message: string) => new CairnError('NOT_ACCEPTABLE', message),
  unsupportedMediaType: (message: string) => new CairnError('UNSUPPORTED_MEDIA_TYPE', message),
  payloadTooLarge: (message: string) => new CairnError('PAYLOAD_TOO_LARGE', message),
  /** Past a limit (failed sign-ins): `details.retryAfterSeconds` says when to try again. */
  tooManyRequests: (message: string, retryAfterSeconds: number) =>
    new CairnError('TOO_MANY_REQUESTS', message, { retryAfterSeconds }),
  /** A dependency (database, token store) is out of reach; `details.cause` may say why (never shown to clients). */
  unavailable: (message: string, details?: Record<string, unknown>) => new CairnError('UNAVAILABLE', message, details),
};
