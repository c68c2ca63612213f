import { Router } from 'express';
import { methodNotAllowed } from '../http/errors';

/**
 * Identity API version discovery, in the shape keystoneauth reads and real Keystone 22 sends:
 * only v3 is advertised (a listed v2.0 would make keystoneauth pick it first, see
 * keystone-swift-interop.md §2), and its `self` link is the gateway's own `/auth/v3/`.
 */
export const IDENTITY_V3 = {
  id: 'v3.14',
  status: 'stable',
  updated: '2020-04-07T00:00:00Z',
  mediaType: 'application/vnd.openstack.identity-v3+json',
} as const;

export function v3VersionEntry(root: string) {
  return {
    id: IDENTITY_V3.id,
    status: IDENTITY_V3.status,
    updated: IDENTITY_V3.updated,
    links: [{ rel: 'self', href: `${root}/v3/` }],
    'media-types': [{ base: 'application/json', type: IDENTITY_V3.mediaType }],
  };
}

/** `root()`: the public URL of the /auth root now (it follows the cluster's auth_url). */
export function discoveryRouter(root: () => string): Router {
  const router = Router();
  const readOnly = methodNotAllowed(['GET', 'HEAD']);

  // Keystone answers its root with 300 Multiple Choices and points Location at the one version.
  router.get('/', (_req, res) => {
    const url = root();
    res
      .status(300)
      .location(`${url}/v3/`)
      .json({ versions: { values: [v3VersionEntry(url)] } });
  });
  router.all('/', readOnly);

  router.get('/v3', (_req, res) => {
    res.json({ version: v3VersionEntry(root()) });
  });
  router.all('/v3', readOnly);
  return router;
}
