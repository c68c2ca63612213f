import type { Command } from 'commander';
import { authGateway, managementApi } from '../servers';

export function registerConfig(program: Command): void {
  program
    .command('config')
    .description('list every environment variable with its default')
    .action(async () => {
      const [{ configSpec }, { configSpec: gatewayConfigSpec }, { describeConfig }, { collectorConfigSpec }] =
        await Promise.all([managementApi(), authGateway(), import('@cairn/config'), import('../config')]);
      process.stdout.write(
        `management-api\n\n${describeConfig(configSpec)}\n\nauth-gateway\n\n${describeConfig(gatewayConfigSpec)}\n\n` +
          `capacity collector\n\n${describeConfig(collectorConfigSpec)}\n`,
      );
    });
}
