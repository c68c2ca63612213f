import type { Command } from 'commander';
import { addRingPlanCommands } from './rings-plan';

/** The `rings` command: planning and applying ring changes (distribution commands join it). */
export function registerRings(program: Command): void {
  const rings = program.command('rings').description('plan, apply and distribute Swift ring changes');
  addRingPlanCommands(rings);
}
