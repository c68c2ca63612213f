import { join } from 'node:path';
import { errors } from '@cairn/domain';

const RING_NAME = /^(account|container|object(-[0-9]+)?)$/;

/** `<swift-dir>/<ring>.builder` and `.ring.gz`, for a ring name swift.conf would use. */
export function ringFiles(swiftDir: string, ring: string): { builder: string; ringFile: string } {
  if (!RING_NAME.test(ring))
    throw errors.invalidInput(`--ring must be account, container, object or object-<policy index>, not '${ring}'.`);
  return { builder: join(swiftDir, `${ring}.builder`), ringFile: join(swiftDir, `${ring}.ring.gz`) };
}
