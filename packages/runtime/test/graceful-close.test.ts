import { createServer, request, Agent, type Server } from 'node:http';
import { closeGracefully } from '../src/graceful-close';

/** GET over `agent`; resolves with the Connection header, or `error:<code>`. */
function get(port: number, agent: Agent): Promise<string> {
  return new Promise((resolve) => {
    request({ port, host: '127.0.0.1', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.headers.connection)));
    })
      .on('error', (e: NodeJS.ErrnoException) => resolve(`error:${e.code}`))
      .end();
  });
}

async function serve(delayMs: number): Promise<{ server: Server; port: number }> {
  const server = createServer((_req, res) => void setTimeout(() => res.end('ok'), delayMs));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

describe('closeGracefully', () => {
  it('when a keep-alive client sends on its idle connection while the server closes, then it is answered (with Connection: close), not reset', async () => {
    const { server, port } = await serve(5);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    expect(await get(port, agent)).toBe('keep-alive');
    // The connection is idle now; the next request races the close, as a balancer's would.
    const racing = get(port, agent);
    const closed = closeGracefully(server, 200);
    expect(await racing).toBe('close');
    await closed;
    expect(await get(port, agent)).toBe('error:ECONNREFUSED');
    agent.destroy();
  });

  it('when clients keep their connections busy, then every answer after the close says Connection: close and the server still ends', async () => {
    const { server, port } = await serve(2);
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const answers: string[] = [];
    let closing = false;
    const loop = async () => {
      while (!closing || answers.length < 400) {
        // Requests sent once the close has begun; those already in flight may still say keep-alive.
        const sentAfter = closing;
        const a = await get(port, agent);
        answers.push(sentAfter ? `after:${a}` : a);
        if (a.startsWith('error')) return;
      }
    };
    const loops = [loop(), loop(), loop(), loop()];
    // The connections are busy (some answers in) before the close begins, however slow the machine.
    while (answers.length < 8) await new Promise((r) => setTimeout(r, 5));
    closing = true;
    const started = Date.now();
    await closeGracefully(server, 200);
    expect(Date.now() - started).toBeLessThan(2_000);
    await Promise.all(loops);
    const after = answers.filter((a) => a.startsWith('after:'));
    // Answered with close, or refused once the listener was gone: never a reset.
    expect(after.filter((a) => a !== 'after:close' && a !== 'after:error:ECONNREFUSED')).toEqual([]);
    agent.destroy();
  });

  it('when an idle connection is never used again, then it is closed after the grace period', async () => {
    const { server, port } = await serve(1);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    await get(port, agent);
    const started = Date.now();
    await closeGracefully(server, 300);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(2_000);
    agent.destroy();
  });
});
