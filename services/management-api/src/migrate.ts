import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Knex } from 'knex';
import { REPLACE_FOREIGN_HASH_FUNCTION, TABLES } from '@cairn/contract';
import {
  clusterCreateSchema,
  errors,
  hashPassword,
  isCairnError,
  validate,
  type ClusterCreateInput,
} from '@cairn/domain';
import { SETUP_LOCK_KEY } from './bootstrap';
import { readConfig } from './config';
import { createDatabase, migrateLatest } from './db/database';
import * as clusters from './services/clusters';
import { ensureCollector, type CollectorSpec } from './services/collectors';
import { SYSTEM_ACTING } from './services/context';

/*
 * The deployment's one-shot migration job (`node dist/migrate.js` in the container image,
 * `pnpm cairn migrate` from a checkout). It runs once per deployment, before or beside the service
 * replicas, which then start with CAIRN_MIGRATE_ON_START=false. Besides the schema it makes the
 * database match what the deployment declares: the clusters its gateways serve (a gateway refuses to
 * start for a cluster that does not exist) and the read-only role the gateways connect as.
 *
 * Deliberately imports neither server.ts nor index.ts: the job needs none of the HTTP side, and
 * loading it would only cost start-up time and memory.
 */

export const MIGRATE_USAGE = `Usage: migrate [--cluster name=<n>,auth_url=<url>,storage_url=<url>[,region=<r>]]...
               [--gateway-role <role> [--gateway-password-file <path>]]
               [--collector cluster=<n>,user=<u>,api_key_file=<path>,password_file=<path>]...

  --cluster      make sure this cluster exists with these URLs (created, or updated to match)
  --gateway-role grant <role> what the gateway needs: SELECT on clusters, storage_users and
                 s3_credentials, INSERT/DELETE on s3_credentials, SELECT/INSERT/DELETE on
                 application_credentials and INSERT on audit_log;
                 with --gateway-password-file the role is created (or its password reset) first
  --collector    give that cluster's storage collector what it runs with: the operator and key
                 in api_key_file ("<operator>:<key>", an admin limited to the cluster) and the
                 superuser storage user <u> with the password in password_file (created, or
                 brought to these)`;

const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
// Role passwords cannot be bound as parameters in CREATE/ALTER ROLE, so only characters that need no
// quoting are accepted: the password is then safe to place in the statement literally.
const ROLE_PASSWORD = /^[A-Za-z0-9_-]{16,256}$/;

export interface MigrateOptions {
  clusters: ClusterCreateInput[];
  gatewayRole?: { name: string; password?: string };
  collectors: CollectorSpec[];
}

/** `key=value,key=value` of a --cluster or --collector argument. */
function keyValues(option: string, spec: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const part of spec.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw errors.invalidInput(`${option} '${spec}': expected key=value pairs separated by commas.`);
    fields[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return fields;
}

/** `name=east,auth_url=http://…/auth,storage_url=http://…/v1[,region=…]`, validated like the API's POST. */
export function parseClusterSpec(spec: string): ClusterCreateInput {
  return validate<ClusterCreateInput>(clusterCreateSchema, keyValues('--cluster', spec));
}

/** A secret file's one line: what the secrets job writes (a trailing newline is not part of it). */
function readSecretFile(option: string, path: string, readFile: (path: string) => string): string {
  try {
    return readFile(path).replace(/\r?\n$/, '');
  } catch (e) {
    throw errors.invalidInput(`${option}: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
}

/**
 * `cluster=east,user=cairn-collector,api_key_file=…,password_file=…`; the secrets themselves are validated by
 * ensureCollector.
 */
export function parseCollectorSpec(spec: string, readFile: (path: string) => string): CollectorSpec {
  const { cluster, user, api_key_file: keyFile, password_file: passwordFile, ...rest } = keyValues('--collector', spec);
  const unknown = Object.keys(rest);
  if (unknown.length > 0)
    throw errors.invalidInput(
      `--collector: unknown key '${unknown[0]}' (expected cluster, user, api_key_file, password_file).`,
    );
  if (!cluster || !user || !keyFile || !passwordFile)
    throw errors.invalidInput('--collector needs cluster=, user=, api_key_file= and password_file=.');
  return {
    cluster,
    user,
    apiKey: readSecretFile('--collector api_key_file', keyFile, readFile),
    password: readSecretFile('--collector password_file', passwordFile, readFile),
  };
}

export function parseMigrateArgs(
  args: string[],
  readFile: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): MigrateOptions {
  const { values } = parseArgs({
    args,
    options: {
      cluster: { type: 'string', multiple: true },
      'gateway-role': { type: 'string' },
      'gateway-password-file': { type: 'string' },
      collector: { type: 'string', multiple: true },
    },
  });
  const clusters = (values.cluster ?? []).map(parseClusterSpec);
  const names = clusters.map((c) => c.name);
  if (new Set(names).size !== names.length) throw errors.invalidInput('--cluster: each cluster name may appear once.');
  const collectors = (values.collector ?? []).map((spec) => parseCollectorSpec(spec, readFile));
  const role = values['gateway-role'];
  const passwordFile = values['gateway-password-file'];
  if (passwordFile && !role) throw errors.invalidInput('--gateway-password-file needs --gateway-role.');
  if (role === undefined) return { clusters, collectors };
  if (!ROLE_NAME.test(role))
    throw errors.invalidInput(
      '--gateway-role must be 1 to 63 lower-case letters, digits or _, not starting with a digit.',
    );
  if (!passwordFile) return { clusters, collectors, gatewayRole: { name: role } };
  const password = readSecretFile('--gateway-password-file', passwordFile, readFile);
  if (!ROLE_PASSWORD.test(password)) {
    throw errors.invalidInput(
      '--gateway-password-file: the password must be 16 to 256 characters of letters, digits, _ or -.',
    );
  }
  return { clusters, collectors, gatewayRole: { name: role, password } };
}

export type { EnsureOutcome } from './services/clusters';

/**
 * Creates each cluster that does not exist and brings the URLs and region of one that does to the
 * declared values (the clusters service, as `migrate`, auditing each change); other clusters are
 * left alone. Serialised with bootstrap() by the same advisory lock, so API replicas starting
 * meanwhile see either none or all of them.
 */
export async function ensureClusters(
  db: Knex,
  declared: ClusterCreateInput[],
): Promise<Array<{ name: string; id: number; outcome: clusters.EnsureOutcome }>> {
  return db.transaction(async (trx) => {
    await trx.raw('SELECT pg_advisory_xact_lock(?)', [SETUP_LOCK_KEY]);
    const results: Array<{ name: string; id: number; outcome: clusters.EnsureOutcome }> = [];
    for (const wanted of declared) {
      const { cluster, outcome } = await clusters.ensure(trx, SYSTEM_ACTING.migrate, wanted);
      results.push({ name: wanted.name, id: cluster.id, outcome });
    }
    return results;
  });
}

/**
 * The gateway's role: CONNECT, schema USAGE, SELECT on the tables it reads (the change log and
 * the heartbeat too), and the writes of its OS-EC2 API (INSERT and DELETE on s3_credentials,
 * INSERT on audit_log), its application credential API (SELECT, INSERT and DELETE on
 * application_credentials), and the replacement of an imported user's hash at its first login;
 * nothing else (no operators, no API keys, no other user changes, no reading the audit trail).
 */
export async function ensureGatewayRole(
  db: Knex,
  role: { name: string; password?: string },
): Promise<'created' | 'updated' | 'granted'> {
  let outcome: 'created' | 'updated' | 'granted' = 'granted';
  if (role.password !== undefined) {
    if (!ROLE_NAME.test(role.name) || !ROLE_PASSWORD.test(role.password))
      throw errors.invalidInput('Invalid gateway role name or password.');
    const exists = (await db.raw('SELECT 1 FROM pg_roles WHERE rolname = ?', [role.name])).rows.length > 0;
    // Checked above to need no quoting; `??` quotes the identifier.
    await db.raw(
      `${exists ? 'ALTER' : 'CREATE'} ROLE ?? WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '${role.password}'`,
      [role.name],
    );
    outcome = exists ? 'updated' : 'created';
  }
  // CONNECT and USAGE as well: a hardened database revokes them from PUBLIC, and the role must
  // still be able to reach the two tables.
  const where = (await db.raw('SELECT current_database() AS database, current_schema() AS schema')).rows[0] as {
    database: string;
    schema: string;
  };
  await db.raw('GRANT CONNECT ON DATABASE ?? TO ??', [where.database, role.name]);
  await db.raw('GRANT USAGE ON SCHEMA ?? TO ??', [where.schema, role.name]);
  // S3: signatures are checked against s3_credentials, and the OS-EC2 endpoints let a user create
  // and delete its own, each with an audit record. Nothing else is written, and the trail cannot
  // be read or changed.
  await db.raw('GRANT SELECT ON ??, ??, ?? TO ??', [
    TABLES.clusters,
    TABLES.storageUsers,
    TABLES.s3Credentials,
    role.name,
  ]);
  // A gateway on a standby follows the change log and the heartbeat there (read only).
  await db.raw('GRANT SELECT ON ??, ?? TO ??', [TABLES.changeLog, TABLES.heartbeat, role.name]);
  await db.raw('GRANT INSERT, DELETE ON ?? TO ??', [TABLES.s3Credentials, role.name]);
  // Application credentials: a user creates, lists and deletes its own through the gateway, and
  // logins and validations read them (ids are made by the gateway: no sequence).
  await db.raw('GRANT SELECT, INSERT, DELETE ON ?? TO ??', [TABLES.applicationCredentials, role.name]);
  // audit_log's ids come from its sequence (s3_credentials' from an identity column: no grant needed).
  await db.raw('GRANT INSERT ON ?? TO ??', [TABLES.audit, role.name]);
  await db.raw('GRANT USAGE ON SEQUENCE ?? TO ??', [`${TABLES.audit}_id_seq`, role.name]);
  // Imported users: the first login replaces their foreign hash through this compare-and-set
  // function (migration 20261127130000), the role's only way to change a user.
  await db.raw(`GRANT EXECUTE ON FUNCTION ??(bigint, text, text) TO ??`, [REPLACE_FOREIGN_HASH_FUNCTION, role.name]);
  return outcome;
}

/**
 * Migrations, then the declared clusters, then the gateway role, then the collectors. The first
 * admin operator and the default cluster stay with the API's own start-up bootstrap, which finds
 * the declared clusters (and creates the first admin even when collector operators exist).
 */
export async function runMigrate(args: string[], write: (line: string) => void): Promise<void> {
  const options = parseMigrateArgs(args);
  const config = readConfig();
  const db = createDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolMax: 2 });
  try {
    const applied = await migrateLatest(db);
    write(applied.length ? `Applied: ${applied.join(', ')}` : 'Migrations: nothing to do.');
    for (const r of await ensureClusters(db, options.clusters))
      write(`Cluster '${r.name}' (id ${r.id}): ${r.outcome}.`);
    if (options.gatewayRole)
      write(`Gateway role '${options.gatewayRole.name}': ${await ensureGatewayRole(db, options.gatewayRole)}.`);
    for (const c of options.collectors) {
      const outcome = await ensureCollector(
        db,
        c,
        (password) => hashPassword(password, config.passwordHashParams),
        SYSTEM_ACTING.migrate,
      );
      write(`Collector of '${c.cluster}': operator ${outcome.operator}, user '${c.user}' ${outcome.user}.`);
    }
  } finally {
    await db.destroy();
  }
}

if (require.main === module) {
  const args = process.argv.slice(2);
  // The image's entry may be called as `migrate.js migrate …`, matching `cairn migrate …`.
  if (args[0] === 'migrate') args.shift();
  if (args[0] === '--help' || args[0] === '-h') {
    process.stdout.write(`${MIGRATE_USAGE}\n`);
  } else {
    runMigrate(args, (line) => process.stdout.write(`${line}\n`)).catch((e: unknown) => {
      process.stderr.write(`migrate: ${isCairnError(e) || e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    });
  }
}
