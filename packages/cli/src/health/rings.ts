import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseRing, RingError } from '@cairn/swift-cluster';
import { nodeKey } from '../capacity/report';

export type ServerType = 'account' | 'container' | 'object';

/** A storage server as the rings list it: one ip:port, and which rings list it. */
export interface HealthNode {
  ip: string;
  port: number;
  /** `ip:port` (IPv6 in brackets). */
  key: string;
  serverTypes: ServerType[];
}

export interface HealthRings {
  nodes: HealthNode[];
  /** md5 (hex) of each ring file by name, as a node's /recon/ringmd5 computes it. */
  ringMd5: Record<string, string>;
  /** Rings a Swift cluster has that this swift dir lacks: their servers are not read. */
  warnings: string[];
}

/** The ring files Swift reads: account, container, and one object ring per policy. */
const RING_FILE = /^(account|container|object)(?:-\d+)?\.ring\.gz$/;

/**
 * Reads every ring in a swift dir (each file once: its md5, then its header with the package's ring
 * parser) and lists the storage servers: distinct ip:port, with the server types whose rings list
 * them, in the order the rings name them. A corrupt ring stops the round (`RingError`).
 */
export async function readHealthRings(swiftDir: string): Promise<HealthRings> {
  let files: string[];
  try {
    files = (await readdir(swiftDir)).filter((f) => RING_FILE.test(f)).sort();
  } catch (e) {
    throw new Error(`cannot read ${swiftDir} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (files.length === 0) throw new Error(`${swiftDir} has no ring files (account, container or object *.ring.gz)`);
  const warnings = ['account.ring.gz', 'container.ring.gz', 'object.ring.gz']
    .filter((f) => !files.includes(f))
    .map((f) => `${swiftDir} has no ${f}: the servers only it lists are not read`);

  const ringMd5: Record<string, string> = {};
  const nodes = new Map<string, HealthNode>();
  for (const file of files) {
    const path = join(swiftDir, file);
    let data: Buffer;
    try {
      data = await readFile(path);
    } catch (e) {
      throw new RingError(file, `cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    // Swift's md5_hash_for_file: the md5 of the file's bytes.
    ringMd5[file] = createHash('md5').update(data).digest('hex');
    const type = RING_FILE.exec(file)![1] as ServerType;
    for (const d of parseRing(data, file).devices) {
      const key = nodeKey(d.ip, d.port);
      const node = nodes.get(key) ?? { ip: d.ip, port: d.port, key, serverTypes: [] };
      if (!node.serverTypes.includes(type)) node.serverTypes.push(type);
      nodes.set(key, node);
    }
  }
  return { nodes: [...nodes.values()], ringMd5, warnings };
}
