import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SwiftConfError, SwiftDirError } from './errors';
import { readRingFile } from './ring';
import type { ParseRingOptions, Ring } from './ring-types';
import { parseSwiftConf, type StoragePolicy } from './swift-conf';

export interface SwiftDir {
  /** From swift.conf, sorted by index. */
  policies: StoragePolicy[];
  /** Object ring of each policy, by policy index (`object.ring.gz` is policy 0, `object-<N>.ring.gz` policy N). */
  rings: Map<number, Ring>;
}

const OBJECT_RING = /^object(?:-(\d+))?\.ring\.gz$/;

/** Swift's file name for a policy's object ring. */
export const objectRingName = (index: number): string => (index === 0 ? 'object.ring.gz' : `object-${index}.ring.gz`);

/**
 * Reads a swift dir (`/etc/swift`): swift.conf's storage policies and each policy's object ring.
 * Every policy needs its ring and every object ring file needs its policy; all mismatches are reported
 * together as a `SwiftDirError` before any ring is parsed. A corrupt ring is a `RingError`; a bad
 * swift.conf a `SwiftConfError`. Account and container rings are not read.
 */
export async function readSwiftDir(dir: string, options: ParseRingOptions = {}): Promise<SwiftDir> {
  const confPath = join(dir, 'swift.conf');
  let text: string;
  try {
    text = await readFile(confPath, 'utf8');
  } catch (e) {
    throw new SwiftConfError(confPath, `cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const policies = parseSwiftConf(text, confPath);

  const problems: string[] = [];
  const ringFiles = new Map<number, string>();
  for (const file of (await readdir(dir)).sort()) {
    const match = OBJECT_RING.exec(file);
    if (!match) continue;
    const index = match[1] === undefined ? 0 : Number(match[1]);
    if (file !== objectRingName(index)) {
      problems.push(`${file}: Swift never reads this file (policy ${index}'s ring is ${objectRingName(index)})`);
    } else if (!policies.some((p) => p.index === index)) {
      problems.push(`${file}: swift.conf has no storage policy ${index}`);
    } else {
      ringFiles.set(index, file);
    }
  }
  for (const p of policies) {
    if (!ringFiles.has(p.index))
      problems.push(`policy ${p.index} (${p.name}) has no ring file ${objectRingName(p.index)}`);
  }
  if (problems.length > 0) throw new SwiftDirError(dir, problems);

  const rings = new Map<number, Ring>();
  for (const p of policies)
    rings.set(p.index, await readRingFile(join(dir, ringFiles.get(p.index) as string), options));
  return { policies, rings };
}
