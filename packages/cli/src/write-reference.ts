import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createProgram } from './program';
import { cliReference } from './reference';

// `pnpm docs:cli`: writes docs/cli.md from the command tree.
writeFileSync(join(__dirname, '..', '..', '..', 'docs', 'cli.md'), cliReference(createProgram()));
