import type { SafetyCheck as ReconSafetyCheck, StepSafetyInput } from '@cairn/swift-cluster';
export type { AppliedStep, Plan, PlanChange, PlanDevice, PlanStep } from './plan-types';

/** A device's disk usage as recon reports it, keyed by `ip:port/device` (see usageKey). */
export interface DeviceUsage {
  used: number;
  size: number;
}

export const usageKey = (d: { ip: string; port: number; device: string }): string => `${d.ip}:${d.port}/${d.device}`;

// The recon safety verdict is @cairn/swift-cluster's (`checkStepSafety`); apply takes the checker
// as a function so that tests can give their own, and adds its own min_part_hours check to the list.
export type { StepSafetyInput } from '@cairn/swift-cluster';
export type SafetyCheck = Omit<ReconSafetyCheck, 'name'> & { name: ReconSafetyCheck['name'] | 'min_part_hours' };
export interface StepSafety {
  safe: boolean;
  checks: SafetyCheck[];
}
export type CheckStepSafety = (input: StepSafetyInput, options?: { timeoutMs?: number }) => Promise<StepSafety>;
