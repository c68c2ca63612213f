import type { HostileRequest } from './arbitraries';
import type { RawResponse } from './raw-http';

/**
 * The properties every answer to a hostile request must have: never a 5xx, every 4xx explains
 * itself in the service's error shape, and nothing internal leaks (stack traces, source paths,
 * secrets, the content of local files).
 */

const STACK_TRACE =
  /\n\s+at [\w.<>]+ \(|\bat [\w.]+ \(\/|node_modules|\/work\/|\/home\/|\/usr\/|\.ts:\d+:\d+|\.js:\d+:\d+|Error: [^"]*\n/;
const LOCAL_FILE = /root:x?:0:0|daemon:x?:\d|\[fonts\]|\[extensions\]/;

/** Keystone's error body, as the gateway sends it. */
function keystoneMessage(body: unknown, status: number): string | null {
  const error = (body as { error?: { code?: unknown; title?: unknown; message?: unknown } } | null)?.error;
  if (!error || typeof error !== 'object') return null;
  if (error.code !== status || typeof error.title !== 'string' || typeof error.message !== 'string') return null;
  return error.message;
}

/** The clear message of a 4xx, or null when there is none. */
export function errorMessage(req: HostileRequest, res: RawResponse): string | null {
  const type = res.headers['content-type'] ?? '';
  const text = res.body.toString('utf8');
  if (/^application\/json/.test(type)) {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return null;
    }
    if (req.service === 'gateway') return keystoneMessage(body, res.status);
    const error = (body as { error?: unknown } | null)?.error;
    return typeof error === 'string' ? error : null;
  }
  if (/^(application|text)\/xml/.test(type) && req.service === 'api') {
    const m = /<response><error>([^<]+)<\/error><\/response>/.exec(text);
    return m ? m[1]! : null;
  }
  // The gateway's documented plain bodies (V1's HTML 401, V2's "Invalid credentials", text refusals).
  if (/^text\/(plain|html)/.test(type) && (req.service === 'gateway' || req.method === 'OPTIONS')) {
    const plain = text.replace(/<[^>]*>/g, ' ').trim();
    return plain || null;
  }
  return null;
}

export interface CheckOptions {
  /** Strings that must never appear in any answer (API keys, passwords). */
  secrets: string[];
}

/** Every property this answer breaks, as readable sentences; empty when it is fine. */
export function checkResponse(req: HostileRequest, res: RawResponse, options: CheckOptions): string[] {
  const problems: string[] = [];
  const text = res.body.toString('utf8');
  if (res.status >= 500) problems.push(`answered ${res.status}: ${text.slice(0, 300)}`);
  if (res.status >= 400 && res.status < 500 && req.method !== 'HEAD') {
    const message = errorMessage(req, res);
    if (!message || !message.trim()) {
      problems.push(
        `a ${res.status} without a clear message (content-type ${JSON.stringify(res.headers['content-type'])}, body ${JSON.stringify(text.slice(0, 200))})`,
      );
    }
  }
  if (STACK_TRACE.test(text))
    problems.push(`the body looks like it holds a stack trace or an internal path: ${text.slice(0, 300)}`);
  if (LOCAL_FILE.test(text)) problems.push('the body holds the content of a local file');
  for (const secret of options.secrets) if (secret && text.includes(secret)) problems.push('the body holds a secret');
  if (req.service === 'api' && req.write && res.status >= 200 && res.status < 300)
    problems.push(`a write that must be refused was accepted (${res.status})`);
  return problems;
}

/** Answers counted by status class, for reports. */
export class StatusTally {
  readonly byClass: Record<string, number> = { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, failed: 0 };
  readonly byStatus = new Map<number, number>();

  add(status: number | null): void {
    if (status === null) {
      this.byClass.failed! += 1;
      return;
    }
    const key = `${Math.floor(status / 100)}xx`;
    this.byClass[key] = (this.byClass[key] ?? 0) + 1;
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
  }

  get total(): number {
    return Object.values(this.byClass).reduce((a, b) => a + b, 0);
  }
}
