import Joi from 'joi';
import type { DestinationStream } from 'pino';
import pretty from 'pino-pretty';

export type LogFormat = 'auto' | 'json' | 'pretty';

/** The LOG_FORMAT entry both services put in their config spec (see @cairn/config). */
export const logFormatConfig = {
  env: 'LOG_FORMAT',
  doc: "Log lines on stdout: 'json' (one JSON object per line, for log shippers), 'pretty' (readable lines for a person), or 'auto' (pretty when stdout is a terminal, JSON otherwise).",
  schema: Joi.string().valid('auto', 'json', 'pretty').default('auto'),
};

/** Whether log lines come out as JSON, given LOG_FORMAT and whether stdout is a terminal. */
export const logsAreJson = (format: LogFormat, stdoutIsTTY: boolean): boolean =>
  format === 'json' || (format === 'auto' && !stdoutIsTTY);

/**
 * Where a service's pino logger writes: undefined (pino's own JSON on stdout) or, for a person at a
 * terminal, pino-pretty in this process. In-process and synchronous rather than a transport worker:
 * lines keep their order with what the launcher prints itself, and no worker thread is started.
 * Redaction still happens in pino, before a line reaches the prettifier.
 */
export function logDestination(format: LogFormat, stdoutIsTTY: boolean): DestinationStream | undefined {
  if (logsAreJson(format, stdoutIsTTY)) return undefined;
  return pretty({
    colorize: stdoutIsTTY,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
    messageFormat: '[{service}] {msg}',
    hideObject: false,
    sync: true,
  });
}
