import { isCairnError, type ErrorCode } from '@cairn/domain/errors';
import { ApiError } from './api-client';

/**
 * `cairn`'s exit codes, one per kind of outcome a script can act on (docs/cli.md lists them):
 * a script retries on UNAVAILABLE, fixes its input on REFUSED, and stops on the others.
 */
export const EXIT = {
  OK: 0,
  /** Anything not named below (a bug, a local file that cannot be read, a partial failure). */
  FAILED: 1,
  /** The command line itself: an unknown command or option, a missing argument. */
  USAGE: 2,
  NOT_FOUND: 3,
  /** No key, a wrong key, or a key whose operator may not do this (401, 403). */
  FORBIDDEN: 4,
  /** The input was refused: a 4xx validation answer, or a value refused before asking the API. */
  REFUSED: 5,
  /** Worth a retry: the API did not answer, or answered 5xx. */
  UNAVAILABLE: 6,
} as const;

/** The exit code for an HTTP status the management API answered with. */
export function exitCodeOfStatus(status: number): number {
  if (status === 404) return EXIT.NOT_FOUND;
  if (status === 401 || status === 403) return EXIT.FORBIDDEN;
  if (status >= 500) return EXIT.UNAVAILABLE;
  if (status >= 400) return EXIT.REFUSED;
  return EXIT.FAILED;
}

const OF_CODE: Record<ErrorCode, number> = {
  INVALID_INPUT: EXIT.REFUSED,
  ALREADY_EXISTS: EXIT.REFUSED,
  IN_USE: EXIT.REFUSED,
  CONFLICT: EXIT.REFUSED,
  METHOD_NOT_ALLOWED: EXIT.REFUSED,
  NOT_ACCEPTABLE: EXIT.REFUSED,
  UNSUPPORTED_MEDIA_TYPE: EXIT.REFUSED,
  PAYLOAD_TOO_LARGE: EXIT.REFUSED,
  TOO_MANY_REQUESTS: EXIT.REFUSED,
  NOT_FOUND: EXIT.NOT_FOUND,
  UNAUTHENTICATED: EXIT.FORBIDDEN,
  FORBIDDEN: EXIT.FORBIDDEN,
  UNAVAILABLE: EXIT.UNAVAILABLE,
};

/** The one mapping from an error a command threw to the process's exit code. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof ApiError) return exitCodeOfStatus(error.status);
  if (isCairnError(error)) return OF_CODE[error.code];
  return EXIT.FAILED;
}
