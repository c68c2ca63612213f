import { resolve } from 'node:path';
import * as gateway from '@cairn/auth-gateway';
import { exitOnSignals, logsAreJson } from '@cairn/runtime';
import * as api from '@cairn/management-api';
import { embeddedKeysRefusal, usesEmbeddedS3Keys, withEmbeddedS3Keys } from './embedded-s3-keys';
import { chooseCluster, type ChoiceContext } from './gateway-cluster';

/** How often the launcher looks again for a cluster the gateway can serve while it has none. */
const CLUSTER_WAIT_MS = 1000;

/**
 * How long after the banner the management API's first maintenance pass runs (then every 15
 * minutes, as always). On embedded PGlite's one connection its two dozen statements (partitions,
 * rollups, retention) would queue ahead of the first requests, delaying their answers by seconds
 * on a busy machine; nothing waits for it (a utilization write makes the partition it needs).
 */
const FIRST_MAINTENANCE_DELAY_MS = 30_000;

/**
 * The all-in-one launcher behind `pnpm start`: management-api and auth-gateway in one process.
 * Without DATABASE_URL the management API runs on embedded PGlite under ./data; without REDIS_URL
 * the gateway keeps its tokens in process. Each service keeps its own config and deps, as in
 * production; only the process and the database handle are shared. The gateway serves the cluster
 * chooseCluster picks; while there is none, the management API runs alone and the gateway starts
 * as soon as one exists.
 */
export async function startAll(): Promise<void> {
  const configured = api.readConfig();
  // The gateway's first scrypt run, on libuv's pool while this thread opens the database (both
  // services read the same CAIRN_PASSWORD_HASH_PARAMS).
  gateway.warmUpPasswordChecks(configured.passwordHashParams);
  const openDeps = api.createDeps(configured);
  // Embedded without CAIRN_S3_SECRET_KEYS: the key file beside the data directory, made only for a
  // database that holds no sealed secret (it needs the database open to tell).
  const ownConfig = await withEmbeddedS3Keys(configured, openDeps.db).catch(async (e: unknown) => {
    await openDeps.db.destroy();
    throw e;
  });
  const s3Keyring = api.s3KeyringOf(ownConfig);
  const apiDeps = { ...openDeps, ...(s3Keyring ? { s3Keyring } : {}) };
  // One process, one keyring: the gateway opens (and its OS-EC2 API seals) what the API seals.
  const gatewayConfig = withKeysOf(gateway.readConfig(), ownConfig);
  const apiConfig = withGatewayAuthUrl(ownConfig, gatewayConfig);
  let served!: () => void;
  const maintenanceAfter = new Promise<void>((resolve) => (served = resolve));
  const runningApi = await api
    .startManagementApi(apiConfig, apiDeps, { maintenanceAfter })
    .catch(async (e: unknown) => {
      await apiDeps.db.destroy();
      // The key file is there but holds another key: say which file, not CAIRN_S3_SECRET_KEYS.
      if (e instanceof api.UnopenableSecretsError && usesEmbeddedS3Keys(configured))
        throw embeddedKeysRefusal(configured.dataDir, e.unopenable);
      throw e;
    });

  let runningGateway: gateway.RunningGateway | undefined;
  let stopping = false;
  let waitTimer: NodeJS.Timeout | undefined;
  exitOnSignals(async () => {
    stopping = true;
    clearTimeout(waitTimer);
    await Promise.all([runningGateway?.close(), runningApi.close()]);
  }, apiDeps.log);

  const apiUrl = `http://${host(apiConfig.host)}:${runningApi.port}`;
  const admin = runningApi.generatedAdmin;
  const auth = admin ? `ApiKey ${admin.name}:${admin.key}` : 'ApiKey <operator>:<key>';
  const ctx: ChoiceContext = {
    configured: gatewayConfig.cluster,
    defaultName: apiConfig.defaultCluster,
    clustersUrl: `${apiUrl}/api/v1/clusters/`,
    auth,
    authUrl: apiConfig.defaultAuthUrl ?? api.DEFAULT_AUTH_URL,
    storageUrl: apiConfig.defaultStorageUrl,
  };

  // One process, one database handle: embedded PGlite admits a single connection, and the
  // management API has just migrated it and created the default cluster (when asked to).
  const startGateway = async (ref: string) => {
    const config = { ...gatewayConfig, cluster: ref };
    const deps = await gateway.createDeps(config, { db: apiDeps.db });
    const running = await gateway.startAuthGateway(config, deps);
    if (stopping) await running.close(0);
    else runningGateway = running;
    return `http://${host(gatewayConfig.host)}:${running.port}`;
  };

  const first = await chooseCluster(apiDeps.db, ctx);
  const gatewayUrl = 'ref' in first ? await startGateway(first.ref) : undefined;
  const banner = bannerStream(apiConfig.logFormat);
  banner.write(
    (admin ? api.adminKeyBanner(admin) : '\n') +
      `Cairn is running (${apiConfig.databaseUrl ? 'Postgres' : `embedded PGlite in ${resolve(apiConfig.dataDir)}`}).\n` +
      `  console         ${apiUrl}/console/\n` +
      `  management API  ${apiUrl}/api/v1/\n` +
      (gatewayUrl
        ? `  auth gateway    ${gatewayUrl}/auth/\n\n`
        : `  auth gateway    not started: waiting for a cluster (below)\n\n`) +
      `Try:\n  curl -H 'Authorization: ${auth}' ${apiUrl}/api/v1/clusters/\n` +
      (admin
        ? ''
        : `\n(The admin key was printed at the first start; ${anotherAdmin(apiConfig.databaseUrl !== undefined)}.)\n`) +
      '\n',
  );
  setTimeout(served, FIRST_MAINTENANCE_DELAY_MS).unref();
  if ('waiting' in first) waitForCluster(first.waiting);

  /** Looks again every CLUSTER_WAIT_MS; says what it waits for whenever that changes. */
  function waitForCluster(told: string): void {
    banner.write(`${told}\n`);
    const look = async () => {
      if (stopping) return;
      const choice = await chooseCluster(apiDeps.db, ctx).catch((e: unknown) => ({ waiting: told, error: e }));
      if ('error' in choice)
        apiDeps.log.warn(
          { err: { message: (choice.error as Error).message } },
          'could not look for a cluster to serve',
        );
      if ('ref' in choice) {
        const url = await startGateway(choice.ref);
        banner.write(`  auth gateway    ${url}/auth/ now serves cluster '${choice.name}'.\n`);
        return;
      }
      if (choice.waiting !== told) banner.write(`${choice.waiting}\n`);
      told = choice.waiting;
      waitTimer = setTimeout(() => void look().catch(fail), CLUSTER_WAIT_MS);
    };
    waitTimer = setTimeout(() => void look().catch(fail), CLUSTER_WAIT_MS);
  }

  function fail(e: unknown): void {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}

/** Where this host reaches a service listening on `h`: loopback for a wildcard address. */
const host = (h: string): string => (h === '0.0.0.0' || h === '::' ? '127.0.0.1' : h.includes(':') ? `[${h}]` : h);

/**
 * The default cluster (made at the first start) is the one this process's gateway serves, so
 * unless CAIRN_DEFAULT_AUTH_URL says otherwise its auth_url, which catalogs, discovery and the
 * console hand out, is where that gateway listens. With CAIRN_GATEWAY_PORT=0 the port is not
 * known before the cluster is made, and the management API's default stays.
 */
function withGatewayAuthUrl(config: api.ManagementApiConfig, gw: gateway.GatewayConfig): api.ManagementApiConfig {
  if (config.defaultAuthUrl !== undefined || gw.port === 0) return config;
  return { ...config, defaultAuthUrl: `http://${host(gw.host)}:${gw.port}/auth` };
}

/** How to get another admin key: on PGlite the command is refused while this process runs. */
function anotherAdmin(postgres: boolean): string {
  const command = "'pnpm cairn operator create --name <name> --role admin'";
  return postgres ? `${command} makes another` : `with Cairn stopped, ${command} makes another`;
}

/** The gateway's S3 keys: its own when configured, else the API's (configured or embedded). */
function withKeysOf(
  config: gateway.GatewayConfig,
  from: { s3SecretKeys?: string; s3CurrentKeyId?: string },
): gateway.GatewayConfig {
  if (config.s3SecretKeys !== undefined || from.s3SecretKeys === undefined) return config;
  return {
    ...config,
    s3SecretKeys: from.s3SecretKeys,
    ...(from.s3CurrentKeyId !== undefined ? { s3CurrentKeyId: from.s3CurrentKeyId } : {}),
  };
}

/**
 * Where the banner goes: after the readable log lines on a terminal; on stderr when stdout carries
 * JSON log lines, so that stream stays one JSON object per line for whatever reads it.
 */
function bannerStream(format: api.ManagementApiConfig['logFormat']): NodeJS.WriteStream {
  return logsAreJson(format, process.stdout.isTTY === true) ? process.stderr : process.stdout;
}
