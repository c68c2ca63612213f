import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';

const MIGRATIONS_DIR = join(__dirname, '../../src/db/migrations');

/**
 * The name of the migrated templates (see migrated-template.ts): a hash of the migrations, the
 * PGlite version and the UTC day (migrations may create date-based partitions), so an edited
 * migration gets a template of its own. Not where the checkout is: checkouts of the same
 * migrations share one template database and one set of archives (a clean clone finds those its
 * machine made before, and leaves no copy of its own behind). Apart from migrated-template.ts so
 * that finding a template that exists loads neither knex, PGlite nor the migrations.
 */
export function templateKey(): string {
  const hash = createHash('sha256');
  for (const name of readdirSync(MIGRATIONS_DIR).sort()) {
    hash
      .update(name)
      .update('\0')
      .update(readFileSync(join(MIGRATIONS_DIR, name)))
      .update('\0');
  }
  // pnpm's real path of PGlite names its version (…/.pnpm/@electric-sql+pglite@<version>/…); from
  // there on (its package does not export its package.json).
  const pglite = realpathSync(require.resolve('@electric-sql/pglite'));
  hash.update(pglite.slice(Math.max(0, pglite.indexOf('/.pnpm/')))).update(new Date().toISOString().slice(0, 10));
  return hash.digest('hex').slice(0, 16);
}
