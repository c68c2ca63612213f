import { Router, type Request, type RequestHandler } from 'express';
import { requestIdOf } from '@cairn/runtime';
import {
  errors,
  hasControlCharacters,
  isS3AccessKey,
  selfApplicationCredentialCreateSchema,
  containerAclSchema,
  selfS3CredentialCreateSchema,
  storageSignInSchema,
  tempUrlKeyActionSchema,
  tempUrlRequestSchema,
  validate,
  type SelfApplicationCredentialInput,
  type SelfS3CredentialInput,
  type StorageSignInInput,
  type ContainerAclInput,
  type TempUrlKeyActionInput,
  type TempUrlRequestInput,
} from '@cairn/domain';
import { parseBody } from '../http/body';
import { send, sendSecret } from '../http/respond';
import { resourceRoute } from '../http/routing';
import {
  authenticateStorageUser,
  authenticateStorageUserOrToken,
  storageSessionIdOf,
  storageSessionOf,
  storageUserOf,
} from '../http/self-auth';
import { clearSessionCookie, sessionIdOf, setSessionCookie, STORAGE_SESSION_COOKIE } from '../http/session-cookie';
import { asResource } from '../resources/marks';
import {
  myStorageJson,
  SELF_APPLICATION_CREDENTIALS_URI,
  SELF_S3_CREDENTIALS_URI,
  SELF_SESSION_URI,
  selfApplicationCredentialJson,
  selfListJson,
  selfS3CredentialJson,
  storageSessionJson,
} from '../resources/self-service';
import { sharedContainerJson, sharedContainersJson, tempUrlJson, tempUrlKeysJson } from '../resources/self-sharing';
import { csrfTokenOf } from '../services/console-sessions';
import type { Db } from '../db/database';
import { myStorage } from '../services/my-storage';
import { SelfKeys } from '../services/self-keys';
import { SelfSharing } from '../services/self-sharing';
import type { SignInOrigin } from '../services/storage-sign-in-audit';
import type { StorageUserSessions } from '../services/storage-user-sessions';

/** Where a sign-in or sign-out came from, for its audit record. */
const originOf = (req: Request): SignInOrigin => ({ clientAddress: req.ip, requestId: requestIdOf(req) ?? null });

/** An application credential id as the gateway makes them; anything else is no credential of anyone's. */
const APPLICATION_CREDENTIAL_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Seven days: what a temporary link is usually for (a download shared this week). */
export const DEFAULT_TEMP_URL_MAX_SECONDS = 7 * 86400;

/** A Swift container name: 1 to 256 bytes of UTF-8, no '/'. */
const containerNameOf = (raw: unknown): string => {
  const name = String(raw);
  if (!name || name.includes('/') || Buffer.byteLength(name) > 256)
    throw errors.notFound(`You have no container '${name}'.`);
  return name;
};

/** `?marker=`: list the containers after this name (Swift's own paging); none or empty: from the first. */
const markerOf = (raw: unknown): string | null => {
  if (raw === undefined || raw === '') return null;
  if (typeof raw !== 'string' || Buffer.byteLength(raw) > 256 || hasControlCharacters(raw))
    throw errors.invalidInput(
      'The marker parameter is a container name (at most 256 bytes, no control characters): the next_marker of the page before.',
    );
  return raw;
};

export interface SelfSettings {
  /** The longest temporary URL lifetime (CAIRN_TEMP_URL_MAX_SECONDS). */
  tempUrlMaxSeconds: number;
}

/**
 * `/api/v1/self/`: what a storage user reaches with its own console session, and nothing else does
 * (an operator's key or session is not a storage user's; every other route refuses this session).
 *
 * - `self/session/`: POST `{"cluster", "user", "password"}` or `{"cluster",
 *   "application_credential_id" (or "application_credential_name" and "user"),
 *   "application_credential_secret"}` signs in (checked by the cluster's gateway under its
 *   failed-login limits; 201 with an HttpOnly, SameSite=Strict cookie),
 *   GET tells who the cookie signs in (`user` null when nobody), DELETE signs out.
 * - `self/storage/`: the account's usage against its quotas, per storage policy, and 30 days of
 *   storage and transfer; with the session, or with the user's own gateway token (`X-Auth-Token`).
 * - `self/s3_credentials/` and `self/application_credentials/` ("My keys"): the user's own keys,
 *   listed, made (the secret shown once) and deleted through the cluster's gateway as the user
 *   (services/self-keys.ts). Writes need the session's CSRF token, as sign-out does.
 * - `self/containers/`, `self/temp_url_keys/` and `self/temp_urls/` ("Sharing"): the account's
 *   container ACLs, temp-URL keys and signed temporary URLs, through the cluster's Swift with the
 *   user's token (services/self-sharing.ts); the keys never leave the server.
 */
export function selfRouter(
  db: Db,
  sessions: StorageUserSessions,
  settings: SelfSettings = { tempUrlMaxSeconds: DEFAULT_TEMP_URL_MAX_SECONDS },
  now: () => Date = () => new Date(),
): Router {
  const router = Router();
  const auth = authenticateStorageUser(sessions);
  // Signing in and asking who is signed in need no session; signing out does.
  const byMethod: RequestHandler = (req, res, next) => (req.method === 'DELETE' ? auth(req, res, next) : next());

  resourceRoute(router, '/self/session/', byMethod, {
    GET: async (req, res) => {
      const sessionId = sessionIdOf(req, STORAGE_SESSION_COOKIE);
      const session = await sessions.find(sessionId);
      res.setHeader('Vary', 'Cookie');
      if (!session || sessionId === undefined) {
        sendSecret(req, res, 200, asResource({ resource_uri: SELF_SESSION_URI, user: null }));
        return;
      }
      sendSecret(req, res, 200, storageSessionJson(session, csrfTokenOf(sessionId), sessions.settings.idleSeconds));
    },
    POST: async (req, res) => {
      const input = validate<StorageSignInInput>(storageSignInSchema, await parseBody(req));
      const { sessionId, session } = await sessions.open(input, originOf(req));
      setSessionCookie(req, res, sessionId, STORAGE_SESSION_COOKIE);
      res.set('Location', SELF_SESSION_URI);
      sendSecret(req, res, 201, storageSessionJson(session, csrfTokenOf(sessionId), sessions.settings.idleSeconds));
    },
    DELETE: async (req, res) => {
      await sessions.close(storageSessionIdOf(res), storageSessionOf(res), originOf(req));
      clearSessionCookie(req, res, STORAGE_SESSION_COOKIE);
      res.status(204).end();
    },
  });

  // Scripts read it with the user's own gateway token too (X-Auth-Token), as Swift clients hold it.
  resourceRoute(router, '/self/storage/', authenticateStorageUserOrToken(db, sessions), {
    GET: async (req, res) => {
      send(req, res, 200, myStorageJson(await myStorage(db, storageUserOf(res), now())));
    },
  });

  // Every call below names no user: the session's own is the only one the gateway is asked about.
  const keys = new SelfKeys(db, sessions);
  resourceRoute(router, '/self/s3_credentials/', auth, {
    GET: async (req, res) => {
      const list = await keys.listS3(storageSessionIdOf(res), storageSessionOf(res));
      sendSecret(req, res, 200, selfListJson(SELF_S3_CREDENTIALS_URI, list.map(selfS3CredentialJson)));
    },
    POST: async (req, res) => {
      const input = validate<SelfS3CredentialInput>(selfS3CredentialCreateSchema, await parseBody(req));
      const created = selfS3CredentialJson(await keys.createS3(storageSessionIdOf(res), storageSessionOf(res), input));
      res.set('Location', String(created.resource_uri));
      sendSecret(req, res, 201, created);
    },
  });
  resourceRoute(router, '/self/s3_credentials/:access_key/', auth, {
    DELETE: async (req, res) => {
      const accessKey = String(req.params.access_key);
      if (!isS3AccessKey(accessKey)) throw errors.notFound('You have no S3 credential with this access key.');
      await keys.deleteS3(storageSessionIdOf(res), storageSessionOf(res), accessKey);
      res.status(204).end();
    },
  });
  resourceRoute(router, '/self/application_credentials/', auth, {
    GET: async (req, res) => {
      const list = await keys.listApplicationCredentials(storageSessionIdOf(res), storageSessionOf(res));
      send(req, res, 200, selfListJson(SELF_APPLICATION_CREDENTIALS_URI, list.map(selfApplicationCredentialJson)));
    },
    POST: async (req, res) => {
      const input = validate<SelfApplicationCredentialInput>(
        selfApplicationCredentialCreateSchema,
        await parseBody(req),
      );
      const created = selfApplicationCredentialJson(
        await keys.createApplicationCredential(storageSessionIdOf(res), storageSessionOf(res), input),
      );
      res.set('Location', String(created.resource_uri));
      sendSecret(req, res, 201, created);
    },
  });
  resourceRoute(router, '/self/application_credentials/:id/', auth, {
    DELETE: async (req, res) => {
      const id = String(req.params.id);
      if (!APPLICATION_CREDENTIAL_ID.test(id))
        throw errors.notFound('You have no application credential with this id.');
      await keys.deleteApplicationCredential(storageSessionIdOf(res), storageSessionOf(res), id);
      res.status(204).end();
    },
  });

  const sharing = new SelfSharing(db, sessions, settings.tempUrlMaxSeconds, now);
  resourceRoute(router, '/self/containers/', auth, {
    GET: async (req, res) => {
      const marker = markerOf(req.query.marker);
      const listed = await sharing.listContainers(storageSessionIdOf(res), storageSessionOf(res), marker);
      send(req, res, 200, sharedContainersJson(listed.containers, listed.truncated, listed.nextMarker));
    },
  });
  resourceRoute(router, '/self/containers/:container/', auth, {
    GET: async (req, res) => {
      const name = containerNameOf(req.params.container);
      send(
        req,
        res,
        200,
        sharedContainerJson(await sharing.container(storageSessionIdOf(res), storageSessionOf(res), name)),
      );
    },
    PUT: async (req, res) => {
      const name = containerNameOf(req.params.container);
      const input = validate<ContainerAclInput>(containerAclSchema, await parseBody(req));
      const set = await sharing.setAcls(storageSessionIdOf(res), storageSessionOf(res), name, input);
      send(req, res, 200, sharedContainerJson(set));
    },
  });
  resourceRoute(router, '/self/temp_url_keys/', auth, {
    GET: async (req, res) => {
      const keys = await sharing.tempUrlKeys(storageSessionIdOf(res), storageSessionOf(res));
      send(req, res, 200, tempUrlKeysJson(keys, settings.tempUrlMaxSeconds));
    },
    POST: async (req, res) => {
      const input = validate<TempUrlKeyActionInput>(tempUrlKeyActionSchema, await parseBody(req));
      const keys = await sharing.changeTempUrlKeys(storageSessionIdOf(res), storageSessionOf(res), input);
      send(req, res, 200, tempUrlKeysJson(keys, settings.tempUrlMaxSeconds));
    },
  });
  resourceRoute(router, '/self/temp_urls/', auth, {
    POST: async (req, res) => {
      const input = validate<TempUrlRequestInput>(tempUrlRequestSchema, await parseBody(req));
      // The URL is a bearer credential for its lifetime: not cached, as a secret is not.
      sendSecret(
        req,
        res,
        201,
        tempUrlJson(await sharing.tempUrl(storageSessionIdOf(res), storageSessionOf(res), input)),
      );
    },
  });
  return router;
}
