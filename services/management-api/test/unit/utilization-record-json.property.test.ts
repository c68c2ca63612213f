import fc from 'fast-check';
import { toJson } from '../../src/http/serialize';
import { recordJson, recordJsonText } from '../../src/resources/utilization-records';

/**
 * A detail writes each hourly record's JSON text directly (recordJsonText) instead of building the
 * record's object and serialising it; the text must be exactly the same, whatever the figures.
 */
const instant = fc.date({ min: new Date(0), max: new Date(4_102_444_800_000), noInvalidDate: true });
const figure = fc.oneof(
  fc.nat(),
  fc.maxSafeNat(),
  fc.double({ min: 0, max: 100, noNaN: true }),
  fc.constantFrom(0, -0, 1e21, Number.NaN, Number.POSITIVE_INFINITY),
);
const columns = {
  storage: ['bytes_used', 'container_count', 'end', 'object_count', 'pct_complete', 'start'],
  transfer: ['bytes_in', 'bytes_out', 'end', 'pct_complete', 'req_count', 'start'],
};

describe('utilization record JSON text', () => {
  it.each(Object.entries(columns))(
    'when any %s record is written as JSON text, then it equals toJson of its representation',
    (_kind, sorted) => {
      const record = fc.record(
        Object.fromEntries(sorted.map((c) => [c, c === 'start' || c === 'end' ? instant : figure])),
      );
      fc.assert(
        fc.property(record, (rec) => {
          expect(recordJsonText(rec, sorted).text).toBe(toJson(recordJson(rec, sorted)));
        }),
        { numRuns: 3000 },
      );
    },
  );
});
