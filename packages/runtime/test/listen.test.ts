import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import { listen } from '../src';

/**
 * listen() has Node build each request and response with express's prototypes already in place
 * (createServer's documented IncomingMessage/ServerResponse options), so that express's own
 * per-request Object.setPrototypeOf finds nothing to change. These tests fail if express stops
 * benefiting: if it no longer uses app.request/app.response as the prototypes, or hands its
 * handlers other objects than the ones Node built.
 */
describe('listen', () => {
  it("when an express app is served, then Node builds requests and responses with express's prototypes, and express keeps them as they are", async () => {
    const app = express();
    const seen: { req?: IncomingMessage; res?: ServerResponse; reqProto?: object; resProto?: object } = {};
    app.get('/', (req, res) => {
      seen.req = req;
      seen.res = res;
      seen.reqProto = Object.getPrototypeOf(req) as object;
      seen.resProto = Object.getPrototypeOf(res) as object;
      res.send('ok');
    });
    const born: {
      req?: IncomingMessage;
      res?: ServerResponse;
      reqProto?: object;
      resProto?: object;
      hasGet?: boolean;
    } = {};
    // The listener listen() is given: it looks at the objects as Node built them, before express does.
    const listener = Object.assign(
      (req: IncomingMessage, res: ServerResponse) => {
        born.req = req;
        born.res = res;
        born.reqProto = Object.getPrototypeOf(req) as object;
        born.resProto = Object.getPrototypeOf(res) as object;
        born.hasGet = typeof (req as { get?: unknown }).get === 'function';
        app(req, res);
      },
      { request: app.request, response: app.response },
    );
    const { server, port } = await listen(listener, 0, '127.0.0.1');
    try {
      const answer = await fetch(`http://127.0.0.1:${port}/`);
      expect(await answer.text()).toBe('ok');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    // Born with express's prototypes (express's req methods such as get() already there)…
    expect(born.reqProto).toBe(app.request);
    expect(born.resProto).toBe(app.response);
    expect(born.hasGet).toBe(true);
    // …and express's handlers get those very objects, with those very prototypes: its per-request
    // setPrototypeOf changed nothing.
    expect(seen.req).toBe(born.req);
    expect(seen.res).toBe(born.res);
    expect(seen.reqProto).toBe(born.reqProto);
    expect(seen.resProto).toBe(born.resProto);
  });

  it('when a plain request listener is served, then its requests are plain Node requests', async () => {
    let proto: object | undefined;
    const { server, port } = await listen(
      (req, res) => {
        proto = Object.getPrototypeOf(req) as object;
        res.end('ok');
      },
      0,
      '127.0.0.1',
    );
    try {
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('ok');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    const { IncomingMessage: NodeRequest } = await import('node:http');
    expect(proto).toBe(NodeRequest.prototype);
  });
});
