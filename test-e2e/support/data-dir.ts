import { restoreDataDir } from '@cairn/management-api';
import { migratedPgliteArchive } from '../../services/management-api/test/support/migrated-template';

/**
 * An embedded data directory that holds the migrated schema and nothing else, for a `cairn start`
 * whose test is not about the first start: it comes up in a second or two instead of running
 * every migration on PGlite first (the first-start tests in start.test.ts and the racing starts of
 * embedded-one-process.test.ts start on empty directories). Laid down the way `cairn restore`
 * does it, from the same archive the in-process tests copy; the admin and the default cluster
 * are still made by the start itself.
 */
export async function migratedDataDir(dir: string): Promise<string> {
  await restoreDataDir(dir, await migratedPgliteArchive(), false);
  return dir;
}
