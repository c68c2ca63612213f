/**
 * The management API served in this process with the statements it sends recorded (knex's query
 * events): what bench/explain-users.ts explains and bench/lib/stack-ceiling.ts replays.
 */
import { createApp, type Deps } from '@cairn/management-api';
import { listen } from '@cairn/runtime';

/** A statement as knex's query event gives it: Postgres' `$n` placeholders, its values, its name. */
export interface SentStatement {
  sql: string;
  bindings: unknown[];
  /** The name it is prepared under; undefined: sent unnamed. */
  name?: string;
  /** Statements of one batch were sent before any statement of the request answered (run together). */
  batch: number;
}

/** The user's own statements: the page, and a related filter's ids before it (not the API key's). */
const isUsersStatement = (sql: string) => /\bstorage_users\b|\bclusters\b/.test(sql) && !/api_keys/.test(sql);

export interface RecordingApi {
  /** GETs `path` with `authorization`; the answer and the user's statements it sent for it. */
  get(path: string, authorization: string): Promise<{ status: number; text: string; statements: SentStatement[] }>;
  /** Stops serving and recording (the database handle stays open). */
  close(): void;
}

export async function recordingApi(deps: Deps): Promise<RecordingApi> {
  let sent: SentStatement[] = [];
  let answered = 0;
  let recording = true;
  deps.db.on('query', (q: { sql: string; bindings?: unknown[]; options?: { name?: string } }) => {
    if (recording) sent.push({ sql: q.sql, bindings: q.bindings ?? [], name: q.options?.name, batch: answered });
  });
  deps.db.on('query-response', () => void answered++);
  const { server, port } = await listen(createApp(deps), 0, '127.0.0.1');
  return {
    async get(path, authorization) {
      sent = [];
      answered = 0;
      const res = await fetch(`http://127.0.0.1:${port}${path}`, {
        headers: { authorization, accept: 'application/json' },
      });
      const text = await res.text();
      return { status: res.status, text, statements: sent.filter((q) => isUsersStatement(q.sql)) };
    },
    close() {
      recording = false;
      server.close();
    },
  };
}
