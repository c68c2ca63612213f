import * as gateway from '@cairn/auth-gateway';
import { exitOnSignals, logsAreJson } from '@cairn/runtime';
import * as api from '@cairn/management-api';

/**
 * The all-in-one launcher behind `pnpm start`: management-api and auth-gateway in one process.
 * Without DATABASE_URL the management API runs on embedded PGlite under ./data; without REDIS_URL
 * the gateway keeps its tokens in process. Each service keeps its own config and deps, as in
 * production; only the process and the database handle are shared.
 */
export async function startAll(): Promise<void> {
  const apiConfig = api.readConfig();
  const gatewayConfig = gateway.readConfig();
  const apiDeps = api.createDeps(apiConfig);
  const runningApi = await api.startManagementApi(apiConfig, apiDeps);
  // One process, one database handle: embedded PGlite admits a single connection, and the
  // management API has just migrated it and created the default cluster the gateway serves.
  const gatewayDeps = await gateway.createDeps(gatewayConfig, { db: apiDeps.db });
  const runningGateway = await gateway.startAuthGateway(gatewayConfig, gatewayDeps);

  const host = (h: string) => (h === '0.0.0.0' || h === '::' ? '127.0.0.1' : h);
  const apiUrl = `http://${host(apiConfig.host)}:${runningApi.port}`;
  const gatewayUrl = `http://${host(gatewayConfig.host)}:${runningGateway.port}`;
  const admin = runningApi.generatedAdmin;
  const auth = admin ? `ApiKey ${admin.name}:${admin.key}` : 'ApiKey <operator>:<key>';
  bannerStream(apiConfig.logFormat).write(
    (admin ? api.adminKeyBanner(admin) : '\n') +
      `Cairn is running (${apiConfig.databaseUrl ? 'Postgres' : `embedded PGlite in ${apiConfig.dataDir}`}).\n` +
      `  console         ${apiUrl}/console/\n` +
      `  management API  ${apiUrl}/api/v1/\n` +
      `  auth gateway    ${gatewayUrl}/auth/\n\n` +
      `Try:\n  curl -H 'Authorization: ${auth}' ${apiUrl}/api/v1/clusters/\n` +
      (admin ? '' : `\n(The admin key was printed at the first start; 'pnpm cairn operator create' makes another.)\n`) +
      '\n',
  );

  exitOnSignals(() => Promise.all([runningGateway.close(), runningApi.close()]), apiDeps.log);
}

/**
 * Where the banner goes: after the readable log lines on a terminal; on stderr when stdout carries
 * JSON log lines, so that stream stays one JSON object per line for whatever reads it.
 */
function bannerStream(format: api.ManagementApiConfig['logFormat']): NodeJS.WriteStream {
  return logsAreJson(format, process.stdout.isTTY === true) ? process.stderr : process.stdout;
}
