import { chmodSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Every directory and file under `dir` (itself included) whose mode is not 0700 / 0600, as "<mode> <path>". */
export function notOwnerOnly(dir: string): string[] {
  const found: string[] = [];
  const visit = (path: string) => {
    const st = statSync(path);
    const mode = st.mode & 0o7777;
    if (mode !== (st.isDirectory() ? 0o700 : 0o600)) found.push(`${mode.toString(8)} ${path}`);
    if (st.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(dir);
  return found;
}

/** Sets every directory under `dir` to `dirMode` and every file to `fileMode`, as an older release left them. */
export function chmodTree(dir: string, dirMode: number, fileMode: number): void {
  const directory = statSync(dir).isDirectory();
  chmodSync(dir, directory ? dirMode : fileMode);
  if (directory) for (const name of readdirSync(dir)) chmodTree(join(dir, name), dirMode, fileMode);
}
