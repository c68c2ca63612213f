/**
 * Runs tasks at most `size` at a time, the others waiting in arrival order. The routes that take
 * large bodies (device reports, utilization writes) hold a body, its text and its parsed form for
 * as long as they write it; a process-wide bound keeps what several admins (or one stuck
 * collector retrying) send at once from adding up past the process's memory. A request waiting
 * here has not read its body yet: it holds a connection, not memory.
 */
export class Slots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running < this.size) this.running++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      // The slot passes straight to the next in line, or is given back.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
