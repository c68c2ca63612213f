import { CommanderError } from 'commander';
import { EXIT, exitCodeOf } from './exit-codes';
import { createProgram } from './program';

/** Help and --version are successes; every other commander error is a usage error. */
function commanderExit(e: CommanderError): number {
  if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.exitCode === 0) return EXIT.OK;
  return EXIT.USAGE;
}

async function main(argv: string[]): Promise<void> {
  try {
    await createProgram().parseAsync(argv, { from: 'user' });
  } catch (e) {
    // Commander has printed its own message (and the hint) on stderr already.
    if (e instanceof CommanderError) {
      process.exitCode = commanderExit(e);
      return;
    }
    process.stderr.write(`cairn: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(exitCodeOf(e));
  }
}

void main(process.argv.slice(2));
