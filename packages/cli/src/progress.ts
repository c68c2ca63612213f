/**
 * A status line for long CLI jobs, redrawn in place on stderr when stderr is a terminal (a person
 * is watching); silent otherwise, so scripts and logs get only the commands' result lines on stdout.
 */
export interface Progress {
  /** Shows what is happening now; `done`/`total` add a count and a percentage. */
  update(step: string, done?: number, total?: number): void;
  /** Removes the status line (before a result line is printed, and at the end). */
  clear(): void;
}

const REDRAW_MS = 100;

export function createProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY) return { update: () => undefined, clear: () => undefined };
  let shown = false;
  let last = 0;
  return {
    update(step, done, total) {
      const now = Date.now();
      // Redraws are throttled, but the last count of a step is always shown.
      if (shown && now - last < REDRAW_MS && done !== total) return;
      last = now;
      const count = done !== undefined && total ? ` ${done}/${total} (${Math.floor((done / total) * 100)} %)` : '';
      const width = Math.max(20, (stream.columns ?? 80) - 1);
      stream.write(`\r\x1b[K${`${step}${count}`.slice(0, width)}`);
      shown = true;
    },
    clear() {
      if (shown) stream.write('\r\x1b[K');
      shown = false;
    },
  };
}
