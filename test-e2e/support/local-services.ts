/**
 * The Postgres server and Redis the end-to-end tests use (the machine's own, see the README's
 * TEST_DATABASE_URL and TEST_REDIS_URL). Apart from stack.ts, which loads both services, so that a
 * test that starts processes of its own reads them without loading either.
 */
export const POSTGRES_ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
