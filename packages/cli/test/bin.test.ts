import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Runs a copy of bin/cairn laid out as in the package, with or without a dist/main.js beside it. */
async function runBin(withDist: boolean): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-bin-'));
  try {
    await mkdir(join(dir, 'bin'));
    await copyFile(join(__dirname, '..', 'bin', 'cairn'), join(dir, 'bin', 'cairn'));
    if (withDist) {
      await mkdir(join(dir, 'dist'));
      await writeFile(join(dir, 'dist', 'main.js'), "process.stdout.write('built main ran');\n");
    }
    return await new Promise((resolve) =>
      execFile(process.execPath, [join(dir, 'bin', 'cairn')], (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
      ),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('bin/cairn', () => {
  it('when dist/ was built, then it runs dist/main.js', async () => {
    const { code, stdout } = await runBin(true);
    expect(code).toBe(0);
    expect(stdout).toBe('built main ran');
  });

  it('when dist/ was never built, then it exits 2 with a sentence that says to build, not a stack trace', async () => {
    const { code, stdout, stderr } = await runBin(false);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^cairn: .*dist\/main\.js does not exist; run `pnpm build` first/);
    expect(stderr).not.toMatch(/at Module\.|MODULE_NOT_FOUND/);
  });
});
