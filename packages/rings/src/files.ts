import { open, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errors } from '@cairn/domain';

/** Writes a file whole or not at all: a temporary file beside it, fsync, rename, fsync the directory. */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const tmp = `${path}.cairn-tmp-${process.pid}`;
  const file = await open(tmp, 'w', 0o644);
  try {
    await file.writeFile(data);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(tmp, path);
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/**
 * Holds `<path>` created with O_EXCL while `fn` runs, so two applies on one ring cannot interleave;
 * the second is refused with a sentence naming the lock file.
 */
export async function withLockFile<T>(path: string, fn: () => Promise<T>): Promise<T> {
  let file;
  try {
    file = await open(path, 'wx', 0o644);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST')
      throw errors.inUse(
        `Another 'cairn rings apply' holds ${path}; wait for it to finish (remove the file only if no apply is running).`,
      );
    throw e;
  }
  try {
    await file.writeFile(`${process.pid}\n`);
    await file.close();
    return await fn();
  } finally {
    await unlink(path).catch(() => undefined);
  }
}
