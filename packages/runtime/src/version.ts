import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Cairn's release version, the one both servers report (`/healthz`, `GET /api/v1/`) and `cairn
 * --version` prints. Read from this package's package.json, which sits one level above both src/
 * and dist/ and ships in every image; every workspace package carries the same version (a test
 * holds them equal), so a release bumps them together.
 */
export const CAIRN_VERSION: string = (
  JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }
).version;
