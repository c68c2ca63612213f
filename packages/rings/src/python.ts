import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { errors } from '@cairn/domain';
import { DEFAULT_SWIFT_PYTHON } from './defaults';

export { DEFAULT_SWIFT_PYTHON };

/** Beside src/ and dist/ alike, so the built package finds it too (package.json ships python/). */
export const WRAPPER = join(__dirname, '..', 'python', 'ring_plan.py');

/**
 * Runs the wrapper with one JSON request and returns its JSON answer. The builder's refusals
 * (exit 5 with `{"error": sentence}`) become INVALID_INPUT with that sentence; a Python without
 * Swift, or no Python at all, gets a sentence saying what to install or pass.
 */
export async function runWrapper<T>(python: string, request: Record<string, unknown>): Promise<T> {
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
    (resolve, reject) => {
      const child = spawn(python, [WRAPPER], { stdio: ['pipe', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', (b: Buffer) => out.push(b));
      child.stderr.on('data', (b: Buffer) => err.push(b));
      child.on('error', (e: NodeJS.ErrnoException) =>
        reject(
          e.code === 'ENOENT' || e.code === 'EACCES'
            ? errors.invalidInput(
                `${python} cannot be run (${e.code}); pass --swift-python with the Python that has Swift.`,
              )
            : e,
        ),
      );
      child.on('close', (c) =>
        resolve({ code: c, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }),
      );
      // The child may exit before reading (no Swift); its answer says why, not an EPIPE.
      child.stdin.on('error', () => undefined);
      child.stdin.end(JSON.stringify(request));
    },
  );
  let answer: unknown;
  try {
    answer = JSON.parse(stdout);
  } catch {
    const last = stderr.trim().split('\n').slice(-1)[0] ?? '';
    throw new Error(`the ring builder wrapper (${python} ${WRAPPER}) failed with exit ${code}: ${last || 'no output'}`);
  }
  const error = (answer as { error?: unknown }).error;
  if (typeof error === 'string') {
    if (error === 'no_swift')
      throw errors.invalidInput(
        `Swift's Python library was not found by ${python}; install swift or pass --swift-python.`,
      );
    throw errors.invalidInput(error);
  }
  if (code !== 0) throw new Error(`the ring builder wrapper exited ${code}: ${stderr.trim()}`);
  return answer as T;
}
