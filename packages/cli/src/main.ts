import { parseArgs } from 'node:util';
import { describeConfig } from '@cairn/config';
import {
  configSpec,
  createDatabase,
  createOperatorWithClusterNames,
  migrateLatest,
  migrateRollbackAll,
  migrateRollbackLast,
  readConfig,
  resealAll,
  runMigrate,
  s3KeyringOf,
  SYSTEM_ACTING,
} from '@cairn/management-api';
import { configSpec as gatewayConfigSpec } from '@cairn/auth-gateway';
import { OPERATOR_ROLES, errors, isCairnError, operatorNameSchema, validate, type OperatorRole } from '@cairn/domain';
import { backupCommand } from './backup/backup';
import { restoreCommand } from './backup/restore';
import { collectOnce } from './capacity/collect';
import { collectorConfigSpec, readCollectorConfig } from './config';
import { createProgress } from './progress';
import { withEmbeddedS3Keys } from './embedded-s3-keys';
import { startAll } from './start';
import { utilizationCommand } from './utilization/command';

const USAGE = `Usage: cairn <command> [options]

Commands:
  start                               management-api and auth-gateway in one process (embedded defaults)
  migrate [--cluster name=<n>,auth_url=<url>,storage_url=<url>[,region=<r>]]...
          [--gateway-role <role> [--gateway-password-file <path>]]
          [--collector cluster=<n>,user=<u>,api_key_file=<path>,password_file=<path>]...
                                      apply the migrations, make sure the named clusters exist
                                      with these URLs, grant <role> what the gateways need,
                                      give each collector its operator, key and storage user
  migrate --rollback                  revert the last batch of migrations (what the last migrate
                                      applied; docs/releasing.md says what that loses)
  migrate --rollback-all              revert every migration
  operator create --name <n> --role <admin|reader> [--cluster <id|name>]...
                                      create an operator and print its API key once
  capacity collect --cluster <id|name> --swift-dir <dir> [--interval <seconds>]
                                      read the object rings and every storage node's recon,
                                      report the devices to the management API (CAIRN_API_URL,
                                      CAIRN_API_KEY="<operator>:<key>"); with --interval, repeat
  utilization collect --cluster <id|name> [--interval <seconds>]
                                      HEAD every account of the cluster (deleted users' too) with
                                      a reseller token (CAIRN_UTILIZATION_USER/_PASSWORD) and
                                      record bytes, objects and containers per policy; with
                                      --interval (dividing 3600), repeat
  utilization ingest-logs --cluster <id|name> [FILE...|-]
                                      sum Swift proxy access log lines per account, policy and
                                      hour and record them (idempotent batches)
  s3 reseal                           re-encrypt every S3 secret under CAIRN_S3_CURRENT_KEY_ID (key
                                      rotation; safe to interrupt and run again)
  backup FILE                         write a consistent copy of the embedded database to FILE; while
                                      cairn start runs, through its management API (CAIRN_API_URL,
                                      CAIRN_API_KEY of an admin)
  restore FILE [--force]              make CAIRN_DATA_DIR the database in FILE (cairn stopped; --force
                                      replaces a data directory that is not empty, keeping it aside)
  config                              list every environment variable with its default

The database comes from DATABASE_URL, or embedded PGlite under CAIRN_DATA_DIR (./data/pglite).`;

async function withDatabase<T>(fn: (db: ReturnType<typeof createDatabase>) => Promise<T>): Promise<T> {
  const config = readConfig();
  const db = createDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolMax: 2 });
  try {
    return await fn(db);
  } finally {
    await db.destroy();
  }
}

async function operatorCreate(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { name: { type: 'string' }, role: { type: 'string' }, cluster: { type: 'string', multiple: true } },
  });
  const name = validate<string>(operatorNameSchema.required().label('name'), values.name);
  if (!values.role || !OPERATOR_ROLES.includes(values.role as OperatorRole)) {
    throw errors.invalidInput(`--role must be one of: ${OPERATOR_ROLES.join(', ')}.`);
  }
  await withDatabase(async (db) => {
    await migrateLatest(db);
    const input = { name, role: values.role as OperatorRole, clusters: values.cluster ?? [] };
    const { operator, key } = await createOperatorWithClusterNames(db, SYSTEM_ACTING.cli, input);
    process.stdout.write(
      `Operator '${operator.name}' (${operator.role}) created. Its API key is shown only now:\n\n` +
        `  Authorization: ApiKey ${operator.name}:${key}\n`,
    );
  });
}

async function s3Reseal(): Promise<void> {
  const config = withEmbeddedS3Keys(readConfig());
  const keyring = s3KeyringOf(config);
  if (!keyring) throw errors.invalidInput('s3 reseal needs CAIRN_S3_SECRET_KEYS (every key still in use) and CAIRN_S3_CURRENT_KEY_ID (the new one).');
  const progress = createProgress();
  const db = createDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolMax: 2 });
  try {
    const r = await resealAll(db, keyring, 500, (p) => progress.update(`${p.checked} checked, ${p.resealed} resealed`)).finally(() => progress.clear());
    process.stdout.write(`${r.checked} S3 credential(s) checked, ${r.resealed} resealed under key '${keyring.currentKeyId}'.\n`);
    if (r.unopenable.length > 0) {
      process.stderr.write(
        `${r.unopenable.length} could not be opened with the configured keys and were left as they are (their key was removed too early, or they were altered): ${r.unopenable.slice(0, 20).join(', ')}${r.unopenable.length > 20 ? ', …' : ''}\n`,
      );
      process.exitCode = 1;
    }
  } finally {
    await db.destroy();
  }
}

async function capacityCollect(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { cluster: { type: 'string' }, 'swift-dir': { type: 'string' }, interval: { type: 'string' } } });
  if (!values.cluster || !values['swift-dir']) throw errors.invalidInput('capacity collect needs --cluster <id|name> and --swift-dir <dir>.');
  const interval = values.interval === undefined ? 0 : Number(values.interval);
  if (!Number.isInteger(interval) || interval < 0) throw errors.invalidInput('--interval must be a whole number of seconds.');
  const progress = createProgress();
  const options = {
    cluster: values.cluster,
    swiftDir: values['swift-dir'],
    config: readCollectorConfig(),
    warn: (l: string) => {
      progress.clear();
      process.stderr.write(`warning: ${l}\n`);
    },
    progress: progress.update,
  };
  const round = async () => {
    const r = await collectOnce(options).finally(() => progress.clear());
    process.stdout.write(`${new Date().toISOString()} cluster ${r.clusterId}: reported ${r.devices} device(s), ${r.reported} with usage\n`);
  };
  if (interval === 0) return round();
  // On a schedule: a failed round is reported and the next one still runs.
  let stopped = false;
  process.once('SIGTERM', () => (stopped = true));
  process.once('SIGINT', () => (stopped = true));
  while (!stopped) {
    await round().catch((e: unknown) => process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`));
    for (let waited = 0; waited < interval * 1000 && !stopped; waited += 200) await new Promise((r) => setTimeout(r, 200));
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, sub, ...rest] = argv;
  switch (command) {
    case 'start':
      await startAll();
      return;
    case 'migrate': {
      if (sub !== '--rollback-all' && sub !== '--rollback') {
        // The same job the container image runs: migrations, declared clusters, gateway role.
        const progress = createProgress();
        progress.update('applying migrations');
        await runMigrate(sub === undefined ? rest : [sub, ...rest], (line) => {
          progress.clear();
          process.stdout.write(`${line}\n`);
          progress.update('working');
        }).finally(() => progress.clear());
        return;
      }
      const progress = createProgress();
      progress.update('reverting migrations');
      await withDatabase(async (db) => {
        const names = await (sub === '--rollback' ? migrateRollbackLast(db) : migrateRollbackAll(db)).finally(() => progress.clear());
        process.stdout.write(names.length ? `Reverted: ${names.join(', ')}\n` : 'Nothing to do.\n');
      });
      return;
    }
    case 'operator':
      if (sub === 'create') return operatorCreate(rest);
      break;
    case 's3':
      if (sub === 'reseal') return s3Reseal();
      break;
    case 'capacity':
      if (sub === 'collect') return capacityCollect(rest);
      break;
    case 'utilization':
      if (sub === 'collect' || sub === 'ingest-logs') return utilizationCommand(sub, rest);
      break;
    case 'backup':
      process.stdout.write(`${await backupCommand(argv.slice(1))}\n`);
      return;
    case 'restore':
      process.stdout.write(`${await restoreCommand(argv.slice(1))}\n`);
      return;
    case 'config':
      process.stdout.write(
        `management-api\n\n${describeConfig(configSpec)}\n\nauth-gateway\n\n${describeConfig(gatewayConfigSpec)}\n\n` +
          `capacity collector\n\n${describeConfig(collectorConfigSpec)}\n`,
      );
      return;
  }
  process.stderr.write(`${USAGE}\n`);
  process.exitCode = 2;
}

main(process.argv.slice(2)).catch((e: unknown) => {
  process.stderr.write(`cairn: ${isCairnError(e) || e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
