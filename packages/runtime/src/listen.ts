import type { Server } from 'node:http';

export interface Listening {
  server: Server;
  /** The bound port (the one picked when asked for port 0). */
  port: number;
}

/** Starts `app` listening and resolves once it is bound, or rejects (e.g. EADDRINUSE). */
export function listen(app: { listen: (port: number, host: string, cb: () => void) => Server }, port: number, host: string): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, () => {
      const address = server.address();
      resolve({ server, port: typeof address === 'object' && address ? address.port : port });
    });
    server.once('error', reject);
  });
}
