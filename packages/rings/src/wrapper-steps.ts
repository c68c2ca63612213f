import type { PlanStep } from './types';

/** A step as ring_plan.py reads and writes it: weights as [device id, weight] pairs. */
export type WrapperStep = Omit<PlanStep, 'weights'> & { weights: Array<[number, number]> };

export const fromWrapperStep = (s: WrapperStep): PlanStep => ({
  ...s,
  weights: s.weights.map(([id, weight]) => ({ id, weight })),
});

export const toWrapperStep = (s: PlanStep) => ({
  add: s.add,
  weights: s.weights.map((w) => [w.id, w.weight]),
  remove: s.remove,
  fraction: s.fraction,
});
