import { errors, escapeHtml, unenforceableQuotas, type Quotas } from '@cairn/domain';
import type { Db } from '../db/database';
import { getSwiftInfo, knownPolicyNames } from '../repositories/quotas';

/**
 * The API's side of quotas: what it refuses before storing them. A policy must be one the cluster
 * reports (device reports or its Swift's /info), named as the cluster names it; a quota must be one
 * the cluster's Swift can enforce, as far as the reconciler has read its /info. Before /info has
 * been read (a new cluster, no reconciler credentials yet) quotas are accepted, and the user's
 * quota_status says why one cannot be applied once the reconciler knows.
 */
export async function checkedQuotas(
  db: Db,
  cluster: { id: number; name: string },
  quotas: Partial<Quotas>,
  prefix = '',
): Promise<Partial<Quotas>> {
  const out: Partial<Quotas> = { ...quotas };
  const perPolicy = (['bytesPolicy', 'countPolicy'] as const).filter((k) => quotas[k]);
  if (perPolicy.length > 0) {
    const known = await knownPolicyNames(db, cluster.id);
    const unknown = new Set<string>();
    for (const key of perPolicy) {
      const canonical: Record<string, string> = {};
      for (const [name, value] of Object.entries(quotas[key]!)) {
        // Swift matches policy names without regard to case; Cairn keeps the cluster's spelling.
        const match = known.find((k) => k.toLowerCase() === name.toLowerCase());
        if (match) canonical[match] = value;
        else unknown.add(name);
      }
      out[key] = canonical;
    }
    if (unknown.size > 0) {
      const names = [...unknown].map((n) => `'${escapeHtml(n)}'`).join(', ');
      const have = known.length
        ? `its policies are ${known.map((n) => `'${escapeHtml(n)}'`).join(', ')}`
        : "it has reported none yet (run 'cairn capacity collect', or wait for the quota reconciler to read its Swift's /info)";
      throw errors.invalidInput(
        `The cluster '${escapeHtml(cluster.name)}' reports no storage policy named ${names}: ${have}.`,
      );
    }
  }
  const info = await getSwiftInfo(db, cluster.id);
  const refused = info && unenforceableQuotas(out, info, prefix);
  if (refused) throw errors.invalidInput(refused);
  return out;
}
