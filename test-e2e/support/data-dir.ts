import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  sweepStaleTemplateFiles,
  TEMPLATE_FILES_DIR,
  templateKey,
} from '../../services/management-api/test/support/template-key';

/**
 * An embedded data directory that holds the migrated schema and nothing else, for a `cairn start`
 * whose test is not about the first start: it comes up in a second or two instead of running
 * every migration on PGlite first (the first-start tests in start.test.ts and the racing starts of
 * embedded-one-process.test.ts start on empty directories). The admin and the default cluster are
 * still made by the start itself.
 *
 * A copy of one such directory, laid down once per migrated template (see template-key.ts) the way
 * `cairn restore` does it, from the archive the in-process tests load: copying it takes a fraction
 * of a second, where a restore (PGlite unpacking and opening the archive in the jest worker) takes
 * seconds of CPU.
 */
export async function migratedDataDir(dir: string): Promise<string> {
  cpSync(await migratedTemplateDir(), dir, { recursive: true });
  return dir;
}

async function migratedTemplateDir(): Promise<string> {
  const template = join(TEMPLATE_FILES_DIR, `pglite-${templateKey()}.dir`);
  if (existsSync(template)) return template;
  // Loaded only to make it: the management API's code and PGlite take seconds to load in a worker.
  const [{ restoreDataDir }, { migratedPgliteArchive }] = await Promise.all([
    import('@cairn/management-api'),
    import('../../services/management-api/test/support/migrated-template'),
  ]);
  const building = `${template}.${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await restoreDataDir(building, await migratedPgliteArchive(), false);
    // Made whole under another name, then renamed: a worker that finds it finds all of it.
    renameSync(building, template);
    sweepStaleTemplateFiles();
  } catch (e) {
    // Another worker renamed its own into place first: that one serves.
    if (!existsSync(template)) throw e;
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return template;
}
