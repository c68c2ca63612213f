import { Worker } from 'node:worker_threads';

/**
 * bcryptjs, unlike node's scrypt and pbkdf2 (libuv's thread pool), computes on the thread that calls
 * it: its async compare only cuts the work into 100 ms slices between which the event loop runs, so
 * every other request waits up to a slice at each step. The gateway runs it here instead, on one
 * thread of its own: the same bcryptjs compare (constant-time, the first 72 bytes of the password),
 * one at a time, off the event loop.
 *
 * The thread starts at the first bcrypt check and keeps the process alive only while a check waits; when it
 * fails, the checks it held are rejected (each a failed login) and the next check starts another.
 */
export class BcryptWorker {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, { resolve: (ok: boolean) => void; reject: (e: Error) => void }>();
  private nextId = 0;

  /** bcryptjs's package as this process resolves it, loaded by the thread (a plain CommonJS file). */
  constructor(private readonly bcryptjsPath: string = require.resolve('bcryptjs')) {}

  readonly compare = (password: string, hash: string): Promise<boolean> =>
    new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject });
      const worker = this.start();
      // Held only while a check waits on it.
      worker.ref();
      worker.postMessage({ id, password, hash });
    });

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const source = `
      const { parentPort } = require('node:worker_threads');
      const bcrypt = require(${JSON.stringify(this.bcryptjsPath)});
      parentPort.on('message', ({ id, password, hash }) => {
        try {
          parentPort.postMessage({ id, ok: bcrypt.compareSync(password, hash) === true });
        } catch (e) {
          parentPort.postMessage({ id, error: String((e && e.message) || e) });
        }
      });`;
    const worker = new Worker(source, { eval: true });
    worker.unref();
    worker.on('message', ({ id, ok, error }: { id: number; ok?: boolean; error?: string }) => {
      const waiting = this.pending.get(id);
      this.pending.delete(id);
      if (this.pending.size === 0) worker.unref();
      if (error !== undefined) waiting?.reject(new Error(`bcrypt check failed: ${error}`));
      else waiting?.resolve(ok === true);
    });
    const fail = (why: string) => {
      if (this.worker === worker) this.worker = undefined;
      for (const [id, waiting] of this.pending) {
        this.pending.delete(id);
        waiting.reject(new Error(`the bcrypt thread ${why}`));
      }
    };
    worker.on('error', (e) => fail(`failed: ${e.message}`));
    worker.on('exit', (code) => fail(`exited (${code})`));
    this.worker = worker;
    return worker;
  }
}
