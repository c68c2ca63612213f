import type { Request } from 'express';
import type { Deps } from '../deps';
import type { Endpoints } from '../keystone/documents';

/** The URLs a token document hands out: the configured ones, the same for every request. */
export function endpointsFor(deps: Deps): Endpoints {
  return { authUrl: deps.publicUrl, storageUrl: deps.storageUrl, region: deps.cluster.region };
}

/** Node reads header bytes as latin1; clients send UTF-8 names. */
export function headerText(req: Request, name: string): string | undefined {
  const raw = req.get(name);
  if (raw === undefined) return undefined;
  const text = Buffer.from(raw, 'latin1').toString('utf8');
  return text.includes('\ufffd') ? raw : text;
}
