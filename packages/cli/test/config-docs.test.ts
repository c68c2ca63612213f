import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeConfig } from '@cairn/config';
import { configSpec as gatewayConfigSpec } from '@cairn/auth-gateway';
import { configSpec as apiConfigSpec } from '@cairn/management-api';
import { collectorConfigSpec } from '../src/config';

/** docs/operations.md shows each config table as `cairn config` prints it from the code. */
describe('the configuration tables in docs/operations.md', () => {
  const doc = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'operations.md'), 'utf8');
  it.each([
    ['management-api', apiConfigSpec],
    ['auth-gateway', gatewayConfigSpec],
    ['the cairn CLI', collectorConfigSpec],
  ] as const)(
    'when the %s config changes, then the doc shows the same table (re-run `pnpm cairn config`)',
    (_name, spec) => {
      expect(doc).toContain(describeConfig(spec as never));
    },
  );
});
