import { randomBytes } from 'node:crypto';
import { chown, open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Replaces `path` with `bytes` so that a reader sees the old file or the new one, never a part:
 * a temporary file in the same directory, written and fsynced, renamed over the old one, and the
 * directory fsynced so the rename itself survives a crash. The new file keeps the old one's mode
 * and (when permitted) owner; a first install is 0644, as Swift's rings are.
 */
export async function installAtomically(path: string, bytes: Buffer): Promise<void> {
  const dir = dirname(path);
  const previous = await stat(path).catch(() => null);
  const temp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const mode = previous ? previous.mode & 0o7777 : 0o644;
  const file = await open(temp, 'wx', mode);
  try {
    await file.writeFile(bytes);
    // Set, not left to open(): the process umask (077 under `cairn start`) would narrow it, and
    // Swift's servers, which run as another user, must read the ring.
    await file.chmod(mode);
    await file.sync();
  } catch (e) {
    await file.close();
    await rm(temp, { force: true });
    throw e;
  }
  await file.close();
  try {
    if (previous && (process.getuid?.() ?? -1) === 0) await chown(temp, previous.uid, previous.gid);
    await rename(temp, path);
  } catch (e) {
    await rm(temp, { force: true });
    throw e;
  }
  const directory = await open(dir, 'r');
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}
