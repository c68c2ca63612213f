import * as gateway from '@cairn/auth-gateway';

type Db = Parameters<typeof gateway.findCluster>[0];

/** The cluster the all-in-one gateway serves (`ref`: its uuid, exact), or why it must wait (one line). */
export type ClusterChoice = { ref: string; name: string } | { waiting: string };

export interface ChoiceContext {
  /** CAIRN_GATEWAY_CLUSTER when set: then only that cluster will do. */
  configured?: string;
  /** CAIRN_DEFAULT_CLUSTER: the name the first start gives the cluster it creates. */
  defaultName: string;
  /** What the "create one" line shows: the API's clusters URL, an Authorization value and the default URLs. */
  clustersUrl: string;
  auth: string;
  authUrl: string;
  storageUrl: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const quoted = (names: string[]) => names.map((n) => `'${n}'`).join(', ');

/**
 * Which cluster `pnpm start` serves: the one CAIRN_GATEWAY_CLUSTER names when set; else the one
 * named CAIRN_DEFAULT_CLUSTER (what the first start created), else the only cluster there is.
 * Otherwise the gateway waits, and the line returned tells the operator what to do.
 */
export async function chooseCluster(db: Db, ctx: ChoiceContext): Promise<ClusterChoice> {
  const ref = ctx.configured ?? ctx.defaultName;
  const found = await gateway.findCluster(db, ref);
  if (found) return { ref: found.uuid, name: found.name };
  const names = await gateway.clusterNames(db);
  if (!ctx.configured && names.length === 1) {
    const only = await gateway.findCluster(db, names[0]!);
    if (only) return { ref: only.uuid, name: only.name };
  }
  if (names.length === 0) {
    // A name the operator chose is the one to create; an id or uuid cannot be chosen by POST.
    const name = /^\d+$/.test(ref) || UUID.test(ref) ? ctx.defaultName : ref;
    // Ready to paste into a POSIX shell: a quote in the name is closed, escaped and reopened.
    const body = JSON.stringify({ name, auth_url: ctx.authUrl, storage_url: ctx.storageUrl }).replace(/'/g, "'\\''");
    return {
      waiting: `No cluster exists yet; the auth gateway starts once one does. Create it: curl -X POST -H 'Authorization: ${ctx.auth}' -H 'Content-Type: application/json' -d '${body}' ${ctx.clustersUrl}`,
    };
  }
  const setting = ctx.configured ? `CAIRN_GATEWAY_CLUSTER='${ref}'` : `CAIRN_DEFAULT_CLUSTER='${ref}'`;
  return {
    waiting: `The auth gateway waits: no cluster matches ${setting}, and there are ${names.length} (${quoted(names)}). Set CAIRN_GATEWAY_CLUSTER to one of them and restart, or create '${ref}'.`,
  };
}
