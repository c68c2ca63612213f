import { errors } from '@cairn/domain/errors';
import { api, apiError, type ApiTarget } from '../api-client';

export { api, apiError, BACKOFF, unreachable, type ApiAnswer, type ApiTarget } from '../api-client';

export interface ClusterInfo {
  id: number;
  name: string;
  auth_url: string;
  storage_url: string;
}

export async function findCluster(config: ApiTarget, cluster: string): Promise<ClusterInfo> {
  if (/^\d+$/.test(cluster)) {
    const r = await api(config, 'GET', `/api/v1/clusters/${cluster}/`);
    if (r.status !== 200) throw apiError(`looking up cluster ${cluster}`, r);
    return r.json as ClusterInfo;
  }
  const r = await api(config, 'GET', `/api/v1/clusters/?name=${encodeURIComponent(cluster)}`);
  if (r.status !== 200) throw apiError(`looking up cluster '${cluster}'`, r);
  const found = (r.json as { objects: ClusterInfo[] }).objects[0];
  if (!found) throw errors.notFound(`the management API has no cluster named '${cluster}'`);
  return found;
}
