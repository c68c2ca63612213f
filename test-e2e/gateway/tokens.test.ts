import { describeTokenCapSuite } from './token-cap-suite';
import { describeTokenSuite } from './token-suite';

// The suites themselves live in token-suite.ts and token-cap-suite.ts so that test-e2e/scale runs them on a Redis
// Cluster too.
describeTokenSuite('Postgres + Redis', () => ({ database: 'postgres', redis: true }));
describeTokenSuite('PGlite + in-process store', () => ({ database: 'pglite', redis: false }));
describeTokenCapSuite('Postgres + Redis', () => ({ database: 'postgres', redis: true }));
describeTokenCapSuite('PGlite + in-process store', () => ({ database: 'pglite', redis: false }));
