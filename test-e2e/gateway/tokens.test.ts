import { describeTokenSuite } from './token-suite';

// The suite itself lives in token-suite.ts so that test-e2e/scale runs it on a Redis Cluster and a Sentinel set too.
describeTokenSuite('Postgres + Redis', () => ({ database: 'postgres', redis: true }));
describeTokenSuite('PGlite + in-process store', () => ({ database: 'pglite', redis: false }));
