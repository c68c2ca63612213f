import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createProgram } from '../src/program';
import { cliReference } from '../src/reference';

describe('docs/cli.md', () => {
  it('when a command, option or description changes, then the page shows the same help (re-run `pnpm docs:cli`)', () => {
    expect(readFileSync(join(__dirname, '..', '..', '..', 'docs', 'cli.md'), 'utf8')).toBe(
      cliReference(createProgram()),
    );
  });
});
