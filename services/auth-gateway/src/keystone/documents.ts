import type { TokenRecord } from '../tokens/store';
import { asText, type Spelling } from './wsgi-names';

/**
 * Keystone V3 and V2.0 token documents as python-keystoneclient, keystoneauth1 and
 * keystonemiddleware read them. In Cairn every object's id equals its name: a user and its project
 * are the username, a domain is whatever the client named it (default: "default").
 */
export interface Endpoints {
  /** Public URL of the gateway's /auth root, without a trailing slash. */
  authUrl: string;
  /** Swift proxy base (…/v1), without a trailing slash. */
  storageUrl: string;
  region: string;
}

/** Keystone's time format: microseconds and a Z. */
export const keystoneTime = (iso: string): string => iso.replace(/\.(\d{3})Z$/, '.$1000Z');

/** Swift's account URL path segment for a project, percent-encoded as it travels in a URL. */
export const accountUrl = (storageUrl: string, project: string): string =>
  `${storageUrl}/${encodeURIComponent(`AUTH_${project}`)}`;

const named = (value: string) => ({ id: value, name: value });

function v3Catalog(record: TokenRecord, e: Endpoints): unknown[] {
  const interfaces = ['public', 'internal', 'admin'] as const;
  const endpoint = (service: string, iface: string, url: string) => ({
    id: `${service}-${iface}`,
    interface: iface,
    region: e.region,
    region_id: e.region,
    url,
  });
  const identityUrl = `${e.authUrl}/v3`;
  const account = accountUrl(e.storageUrl, record.project!);
  return [
    {
      endpoints: interfaces.map((i) => endpoint('identity', i, identityUrl)),
      id: 'keystone',
      name: 'keystone',
      type: 'identity',
    },
    {
      endpoints: interfaces.map((i) => endpoint('swift', i, i === 'admin' ? e.storageUrl : account)),
      id: 'swift',
      name: 'swift',
      type: 'object-store',
    },
  ];
}

/** `spell`: how user, project and domain ids and names are written (validation answers: wsgi-names.ts). */
export function v3TokenBody(
  record: TokenRecord,
  e: Endpoints,
  withCatalog: boolean,
  spell: Spelling = asText,
): Record<string, unknown> {
  const token: Record<string, unknown> = {
    audit_ids: [record.auditId],
    expires_at: keystoneTime(record.expiresAt),
    issued_at: keystoneTime(record.issuedAt),
    methods: record.methods,
    user: { domain: named(spell(record.userDomain)), ...named(spell(record.user)), password_expires_at: null },
  };
  if (record.project !== undefined) {
    token.project = { domain: named(spell(record.projectDomain ?? 'default')), ...named(spell(record.project)) };
    token.is_domain = false;
    token.roles = record.roles.map(named);
    if (withCatalog) token.catalog = v3Catalog(record, e);
  }
  // Keystone's field for a token issued by an application credential; keystonemiddleware enforces
  // `access_rules` against each request (docs/auth-gateway.md).
  const appCred = record.applicationCredential;
  if (appCred) {
    token.application_credential = {
      id: appCred.id,
      name: appCred.name,
      restricted: appCred.restricted,
      ...(appCred.accessRules ? { access_rules: appCred.accessRules } : {}),
    };
  }
  return { token };
}

/** `spell` as for v3TokenBody (URLs always name the account as stored). */
export function v2AccessBody(
  id: string,
  record: TokenRecord,
  e: Endpoints,
  spell: Spelling = asText,
): Record<string, unknown> {
  const project = record.project!;
  const user = spell(record.user);
  const account = accountUrl(e.storageUrl, project);
  return {
    access: {
      metadata: { is_admin: 0, roles: record.roles },
      serviceCatalog: [
        {
          endpoints: [
            {
              adminURL: e.storageUrl,
              id: 'swift',
              internalURL: account,
              publicURL: account,
              region: e.region,
              tenantId: spell(project),
              versionId: 1,
            },
          ],
          endpoints_links: [],
          name: 'swift',
          type: 'object-store',
        },
        {
          endpoints: [
            {
              adminURL: `${e.authUrl}/v2.0`,
              id: 'keystone',
              internalURL: `${e.authUrl}/v2.0`,
              publicURL: `${e.authUrl}/v2.0`,
              region: e.region,
              versionId: 2,
            },
          ],
          endpoints_links: [],
          name: 'keystone',
          type: 'identity',
        },
      ],
      token: {
        audit_ids: [record.auditId],
        expires: record.expiresAt.replace(/\.\d{3}Z$/, 'Z'),
        id,
        issued_at: keystoneTime(record.issuedAt).replace(/Z$/, ''),
        tenant: { description: null, enabled: true, ...named(spell(project)) },
      },
      user: { ...named(user), roles: record.roles.map(named), roles_links: [], username: user },
    },
  };
}
