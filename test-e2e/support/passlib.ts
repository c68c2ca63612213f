import { execFileSync } from 'node:child_process';

/**
 * Hashes made by passlib itself (Debian's python3-passlib), the library Keystone hashes its users'
 * passwords with, so the import is tested on hashes made the way the systems it imports from make
 * them. `python3` may be a pyenv or venv interpreter without Debian's packages, hence the second
 * candidate.
 */
const CANDIDATES = ['python3', '/usr/bin/python3'];

export type PasslibHash = {
  scheme: 'bcrypt' | 'pbkdf2_sha512' | 'scrypt';
  password: string;
  settings?: Record<string, string | number>;
};

const SCRIPT = `
import json, sys
import passlib.hash
out = []
for h in json.load(sys.stdin):
    out.append(getattr(passlib.hash, h["scheme"]).using(**h.get("settings", {})).hash(h["password"]))
json.dump(out, sys.stdout)
`;

function findPython(): string | null {
  for (const python of CANDIDATES) {
    try {
      execFileSync(python, ['-c', 'import passlib.hash'], { stdio: 'ignore' });
      return python;
    } catch {
      // not this one
    }
  }
  return null;
}

/** The interpreter with passlib, or null (the callers skip, saying why). */
export const PASSLIB_PYTHON = findPython();

export const PASSLIB_MISSING =
  'python3-passlib is not installed (apt-get install -y python3-passlib): tests of hashes made by passlib are skipped.';

/** One python run for all of them (passwords go through stdin, never a command line). */
export function passlibHashes(wanted: PasslibHash[]): string[] {
  if (!PASSLIB_PYTHON) throw new Error(PASSLIB_MISSING);
  return JSON.parse(
    execFileSync(PASSLIB_PYTHON, ['-c', SCRIPT], { input: JSON.stringify(wanted), encoding: 'utf8' }),
  ) as string[];
}
