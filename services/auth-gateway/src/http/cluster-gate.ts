import type { RequestHandler } from 'express';
import type { ServedCluster } from '../credentials/served-cluster';
import { sendKeystoneError } from './errors';
import { sendText } from './respond';

/** Why a gateway whose cluster was deleted answers 503, as a person reads it. */
export function deletedClusterMessage(cluster: ServedCluster): string {
  return `The cluster this gateway serves ('${cluster.settings.name}', uuid ${cluster.uuid}) has been deleted, so it authenticates no one. Point clients at another cluster's gateway; a cluster created again is a new one: restart this gateway to serve it.`;
}

/**
 * Answers 503 on every auth route once the served cluster has been deleted, rather than answers
 * built from its last settings: in Swift's plain text on V1 paths, in Keystone's error body
 * elsewhere. Mounted under the /auth root.
 */
export function clusterGate(cluster: ServedCluster): RequestHandler {
  return (req, res, next) => {
    if (!cluster.deleted) return next();
    const message = deletedClusterMessage(cluster);
    if (/^\/v1(\.0)?(\/|$)/.test(req.path)) sendText(res, 503, 'text/plain; charset=utf-8', message);
    else sendKeystoneError(res, 503, message);
  };
}
