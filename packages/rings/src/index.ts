export { makePlan, DEFAULT_MAX_MOVE_PCT, type PlanOptions } from './plan';
export { applyNextStep, readPlan, type ApplyOptions, type ApplyOutcome } from './apply';
export { reconUsage } from './recon-usage';
export { writeFileAtomic } from './files';
export { DEFAULT_SWIFT_PYTHON } from './python';
export type {
  AppliedStep,
  CheckStepSafety,
  DeviceUsage,
  Plan,
  PlanDevice,
  PlanStep,
  SafetyCheck,
  StepSafety,
  StepSafetyInput,
} from './types';
export { usageKey } from './types';
