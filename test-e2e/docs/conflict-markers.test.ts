import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/processes';

/**
 * A merge that leaves a conflict's markers in code fails to compile, but in Markdown, YAML or a
 * shell script it passes every other check and ships both sides of the conflict to the reader.
 */
const MARKER = /^(?:<{7} |>{7} )/m;

describe('the repository', () => {
  it('when every tracked text file is read, then none holds a merge conflict marker', () => {
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: REPO_ROOT, encoding: 'utf8' })
      .split('\0')
      .filter(Boolean);
    expect(files.length).toBeGreaterThan(100);
    const marked = files.filter((file) => {
      const bytes = readFileSync(join(REPO_ROOT, file));
      return !bytes.includes(0) && MARKER.test(bytes.toString('utf8'));
    });
    expect(marked).toEqual([]);
  });
});
