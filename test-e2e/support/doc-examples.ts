import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One runnable example: a fenced sh block marked `<!-- example: <group> -->` on the line above it. */
export interface DocExample {
  group: string;
  /** `README.md:123`, the line of the opening fence. */
  where: string;
  code: string;
}

const MARK = /^<!-- example: ([\w-]+) -->$/;

/**
 * The marked sh blocks of `files` (paths relative to `root`), in file order and then in order
 * within each file. Unmarked blocks (installs, a real Swift, a server stopped) are not examples.
 */
export function docExamples(root: string, files: string[]): DocExample[] {
  const found: DocExample[] = [];
  for (const file of files) {
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    lines.forEach((line, i) => {
      const mark = MARK.exec(line.trim());
      if (!mark) return;
      if (lines[i + 1] !== '```sh')
        throw new Error(`${file}:${i + 1}: an example mark must stand right above a \`\`\`sh fence`);
      const end = lines.indexOf('```', i + 2);
      if (end < 0) throw new Error(`${file}:${i + 2}: the example's fence is never closed`);
      found.push({ group: mark[1]!, where: `${file}:${i + 2}`, code: lines.slice(i + 2, end).join('\n') });
    });
  }
  return found;
}

/** What the docs write for a fresh `pnpm start`, and what a test's own start has instead. */
export interface DocSubstitutions {
  apiUrl: string;
  gatewayUrl: string;
  adminKey: string;
}

/** One example with the docs' addresses and placeholder key replaced by a running start's. */
export function substitute(code: string, s: DocSubstitutions): string {
  return code
    .replaceAll('http://127.0.0.1:8000', s.apiUrl)
    .replaceAll('http://127.0.0.1:5000', s.gatewayUrl)
    .replaceAll('<the key printed at first start>', s.adminKey)
    .replaceAll('<key>', s.adminKey);
}
