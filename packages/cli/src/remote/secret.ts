import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { errors } from '@cairn/domain/errors';

/** All of standard input, without the final line break (`--password-stdin`, `--key-stdin`). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/**
 * Asks on the terminal without echoing what is typed. Only on a terminal: a script gives the
 * secret on standard input instead (`flag`), never on the command line, where `ps` would show it.
 */
export async function promptSecret(question: string, flag: string): Promise<string> {
  if (!process.stdin.isTTY || !process.stderr.isTTY) {
    throw errors.invalidInput(`No terminal to ask for it on: give it on standard input with ${flag}.`);
  }
  let muted = false;
  const output = new Writable({
    write(chunk: Buffer, _enc, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  try {
    const answer = new Promise<string>((resolve) => rl.question(question, resolve));
    muted = true;
    const value = await answer;
    process.stderr.write('\n');
    return value;
  } finally {
    rl.close();
  }
}

/** A secret from stdin when `fromStdin`, else from a no-echo prompt; `what` names it when it is empty. */
export async function readSecret(
  fromStdin: boolean | undefined,
  what: string,
  question: string,
  flag: string,
): Promise<string> {
  const value = fromStdin ? await readStdin() : await promptSecret(question, flag);
  if (!value) throw errors.invalidInput(`The ${what} is empty${fromStdin ? ` (standard input, ${flag})` : ''}.`);
  return value;
}

/** Whether a person can be asked: standard input and standard error are a terminal. */
export const onTerminal = (): boolean => Boolean(process.stdin.isTTY && process.stderr.isTTY);

/** Asks `question` on the terminal; true when the answer is y or yes. */
export async function askYes(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  try {
    const answer = await new Promise<string>((resolve) => rl.question(question, resolve));
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
