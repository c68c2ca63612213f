import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MIGRATIONS_DIR = join(__dirname, '../../src/db/migrations');
/** Where the PGlite archives and data directories of the templates are kept. */
export const TEMPLATE_FILES_DIR = join(tmpdir(), 'cairn-test-templates');

/** The UTC day of `ms` as yyyymmdd. */
const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10).replaceAll('-', '');

/**
 * The name of the migrated templates (see migrated-template.ts): the UTC day (migrations may create
 * date-based partitions), then a hash of the migrations and the PGlite version, so an edited
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
  hash.update(pglite.slice(Math.max(0, pglite.indexOf('/.pnpm/'))));
  return `${dayOf(Date.now())}_${hash.digest('hex').slice(0, 16)}`;
}

/**
 * Whether `name` holds the key of a template made before yesterday (UTC). Templates are made per
 * day, so each day leaves one behind; whoever makes a new one removes those, which no test run
 * still going can be using (yesterday's are kept for the runs that began before midnight). A key
 * of the hash alone, as checkouts older than the day prefix named theirs, is stale too.
 */
export function isStaleTemplate(name: string, now = Date.now()): boolean {
  const key = /[-_](?:(\d{8})_)?[0-9a-f]{16}(?![0-9a-f])/.exec(name);
  if (!key) return false;
  const day = key[1];
  return day === undefined || day < dayOf(now - 86_400_000);
}

/** Removes the PGlite archives and data directories of stale templates (isStaleTemplate). */
export function sweepStaleTemplateFiles(): void {
  let names: string[];
  try {
    names = readdirSync(TEMPLATE_FILES_DIR);
  } catch {
    return;
  }
  for (const name of names.filter((n) => isStaleTemplate(n)))
    rmSync(join(TEMPLATE_FILES_DIR, name), { recursive: true, force: true });
}
