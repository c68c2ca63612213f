/**
 * A stub of many Swift storage nodes' recon, in its own process so that it does not share the
 * collector's core: one HTTP server on 0.0.0.0 that each node reaches by its own loopback address
 * (127.x.y.z), answering with the samples of the file given as argv[2] (an object by endpoint),
 * `time` with the clock. Addresses listed in argv[3] (comma-separated) drop every connection.
 * Every answer waits argv[4] ms first (a storage server's recon reads its disks and caches).
 * Prints `{"port": …}` once listening; on a line "counts" on stdin, prints requests per address.
 */
const { createServer } = require('node:http');
const { readFileSync } = require('node:fs');

const sample = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const silent = new Set((process.argv[3] ?? '').split(',').filter(Boolean));
const delayMs = Number(process.argv[4] ?? 0);
const asked = {};
const server = createServer((req, res) => {
  const ip = (req.socket.localAddress ?? '').replace(/^::ffff:/, '');
  asked[ip] = (asked[ip] ?? 0) + 1;
  if (silent.has(ip)) return req.socket.destroy();
  const endpoint = (req.url ?? '').replace(/^\/recon\//, '');
  const body = endpoint === 'time' ? Date.now() / 1000 : sample[endpoint];
  setTimeout(() => {
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? 'Invalid path'));
  }, delayMs);
});
server.listen(0, '0.0.0.0', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
process.stdin.on('data', (d) => {
  if (d.toString().includes('counts')) process.stdout.write(`${JSON.stringify(asked)}\n`);
});
process.stdin.on('end', () => process.exit(0));
