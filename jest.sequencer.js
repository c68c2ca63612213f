const { openSync, readSync, closeSync } = require('node:fs');
const Sequencer = require('@jest/test-sequencer').default;

/**
 * Jest runs the files it has timings for longest first, and the rest biggest first. A fresh clone
 * (CI) has no timings, and a short file that drives a slow system (Swift replication passes, a
 * database started per test) can start last and leave the other worker idle for minutes. So a file
 * whose docblock carries `@slow` (one of half a minute or more) goes first while jest has no timing
 * for it; with timings, jest's own order stands.
 */
const SLOW = /^\s*\*\s*@slow\b/m;
const HEAD_BYTES = 4096;

function markedSlow(path) {
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(HEAD_BYTES);
    const read = readSync(fd, head, 0, HEAD_BYTES, 0);
    return SLOW.test(head.toString('utf8', 0, read));
  } finally {
    closeSync(fd);
  }
}

class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const first = sorted.filter((t) => t.duration == null && markedSlow(t.path));
    return first.length === 0 ? sorted : [...first, ...sorted.filter((t) => !first.includes(t))];
  }
}

module.exports = SlowFirstSequencer;
