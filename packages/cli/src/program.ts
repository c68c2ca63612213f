import { Command } from 'commander';
// The version alone, not the servers' runtime (pino, prom-client) that @cairn/runtime's index brings.
import { CAIRN_VERSION } from '@cairn/runtime/version';
import { registerAudit } from './commands/audit';
import { registerBackup } from './commands/backup';
import { registerCapacity } from './commands/capacity';
import { registerClusters } from './commands/clusters';
import { registerCompletion } from './commands/completion';
import { registerConfig } from './commands/config';
import { registerContext } from './commands/context';
import { registerHealth } from './commands/health';
import { addHealthShowCommand } from './commands/health-show';
import { registerMigrate } from './commands/migrate';
import { registerOperator } from './commands/operator';
import { registerOperators } from './commands/operators';
import { registerRings } from './commands/rings';
import { registerS3 } from './commands/s3';
import { registerS3Credentials } from './commands/s3-credentials';
import { registerStart } from './commands/start';
import { registerUsers } from './commands/users';
import { registerUtilization } from './commands/utilization';

/**
 * The whole command tree. Each command registers itself from its own file under commands/, so a
 * new command is one file and one line here.
 */
export function createProgram(): Command {
  const program = new Command('cairn')
    .description(
      'Cairn, the control plane for OpenStack Swift: host commands (start, migrate, collectors) and a client of the management API',
    )
    .version(CAIRN_VERSION, '-V, --version', 'print the version')
    .option('--context <name>', 'the context to use (default: CAIRN_CONTEXT, else the current one)')
    .addHelpText(
      'after',
      `
The database of the host commands comes from DATABASE_URL, or embedded PGlite under CAIRN_DATA_DIR (./data/pglite).
API commands use the context (cairn context add …); CAIRN_API_URL and CAIRN_API_KEY / CAIRN_API_KEY_FILE override it.

Exit codes: 0 success, 1 other failure, 2 usage, 3 not found, 4 not authenticated or forbidden,
5 input refused, 6 unavailable (worth a retry). A collector running with --interval exits 0 when
stopped by SIGTERM or SIGINT.`,
    );
  for (const register of [
    registerStart,
    registerMigrate,
    registerOperator,
    registerContext,
    registerClusters,
    registerUsers,
    registerS3Credentials,
    registerOperators,
    registerCapacity,
    registerRings,
    // collect from commands/health.ts, show from commands/health-show.ts, under one `health`.
    (p: Command) => addHealthShowCommand(registerHealth(p)),
    registerUtilization,
    registerAudit,
    registerBackup,
    registerS3,
    registerConfig,
    registerCompletion,
  ]) {
    register(program);
  }
  // After registration, so that every command has its own hint; every command exits through main's catch.
  const configure = (cmd: Command, path: string) => {
    cmd.exitOverride().showHelpAfterError(`Run '${path} --help' for usage.`);
    for (const sub of cmd.commands) configure(sub, `${path} ${sub.name()}`);
  };
  configure(program, 'cairn');
  return program;
}
