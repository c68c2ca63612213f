import { parseArgs } from 'node:util';
import { describeConfig } from '@cairn/config';
import {
  configSpec,
  createDatabase,
  createOperatorWithKey,
  findClusterByName,
  migrateLatest,
  migrateRollbackAll,
  readConfig,
} from '@cairn/management-api';
import { configSpec as gatewayConfigSpec } from '@cairn/auth-gateway';
import { OPERATOR_ROLES, errors, isCairnError, operatorNameSchema, validate, type OperatorRole } from '@cairn/domain';
import { startAll } from './start';

const USAGE = `Usage: cairn <command> [options]

Commands:
  start                               management-api and auth-gateway in one process (embedded defaults)
  migrate [--rollback-all]            apply (or revert) the database migrations
  operator create --name <n> --role <admin|reader> [--cluster <id|name>]...
                                      create an operator and print its API key once
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
    const clusterIds: number[] = [];
    for (const ref of values.cluster ?? []) {
      const cluster = /^\d+$/.test(ref) ? { id: Number(ref) } : await findClusterByName(db, ref);
      if (!cluster) throw errors.invalidInput(`No cluster named '${ref}'.`);
      clusterIds.push(cluster.id);
    }
    const { operator, key } = await db.transaction((trx) => createOperatorWithKey(trx, { name, role: values.role as OperatorRole, clusterIds }));
    process.stdout.write(
      `Operator '${operator.name}' (${operator.role}) created. Its API key is shown only now:\n\n` +
        `  Authorization: ApiKey ${operator.name}:${key}\n`,
    );
  });
}

async function main(argv: string[]): Promise<void> {
  const [command, sub, ...rest] = argv;
  switch (command) {
    case 'start':
      await startAll();
      return;
    case 'migrate': {
      const rollback = sub === '--rollback-all';
      await withDatabase(async (db) => {
        const names = rollback ? await migrateRollbackAll(db) : await migrateLatest(db);
        process.stdout.write(names.length ? `${rollback ? 'Reverted' : 'Applied'}: ${names.join(', ')}\n` : 'Nothing to do.\n');
      });
      return;
    }
    case 'operator':
      if (sub === 'create') return operatorCreate(rest);
      break;
    case 'config':
      process.stdout.write(`management-api\n\n${describeConfig(configSpec)}\n\nauth-gateway\n\n${describeConfig(gatewayConfigSpec)}\n`);
      return;
  }
  process.stderr.write(`${USAGE}\n`);
  process.exitCode = 2;
}

main(process.argv.slice(2)).catch((e: unknown) => {
  process.stderr.write(`cairn: ${isCairnError(e) || e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
