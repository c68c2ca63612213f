import type { Command } from 'commander';
import { describeConfig } from '@cairn/config';
import { configSpec } from '@cairn/management-api';
import { configSpec as gatewayConfigSpec } from '@cairn/auth-gateway';
import { collectorConfigSpec } from '../config';

export function registerConfig(program: Command): void {
  program
    .command('config')
    .description('list every environment variable with its default')
    .action(() => {
      process.stdout.write(
        `management-api\n\n${describeConfig(configSpec)}\n\nauth-gateway\n\n${describeConfig(gatewayConfigSpec)}\n\n` +
          `capacity collector\n\n${describeConfig(collectorConfigSpec)}\n`,
      );
    });
}
