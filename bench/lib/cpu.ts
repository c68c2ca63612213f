/**
 * CPU accounting from Linux /proc (silently absent elsewhere): which cores went to which party
 * (a server, postgres, redis, the load generator, ...) between two snapshots, and the rest of the
 * machine ("other", e.g. other tenants).
 */
import { readFileSync, readdirSync } from 'node:fs';

const CLOCK_TICKS = 100;

export interface ProcInfo {
  pid: number;
  comm: string;
  /** Process group. */
  pgrp: number;
  /** utime + stime of the whole process (all its threads), in clock ticks. */
  ticks: number;
}

export interface CpuSnapshot {
  at: number;
  procs: Map<number, ProcInfo>;
  /** Busy ticks of the whole machine (all processes, all tenants). */
  machine: number;
}

/** Who a CPU figure is about; parties of one measurement must not overlap. */
export interface Party {
  name: string;
  match: (p: ProcInfo) => boolean;
}

export const party = {
  pid: (name: string, pid: number): Party => ({ name, match: (p) => p.pid === pid }),
  /** Every process of a process group (e.g. a server that forks its workers). */
  group: (name: string, pgrp: number): Party => ({ name, match: (p) => p.pgrp === pgrp }),
  /** Every process with this command name (e.g. all postgres backends). */
  comm: (name: string, comm: string): Party => ({ name, match: (p) => p.comm === comm }),
  /** This process: the load generator. */
  self: (name = 'loadgen'): Party => ({ name, match: (p) => p.pid === process.pid }),
};

function procInfo(pid: number): ProcInfo | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    // fields[0] is field 3 (state) of /proc/<pid>/stat: pgrp is field 5, utime and stime 14 and 15.
    return { pid, comm, pgrp: Number(fields[2]), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return null;
  }
}

/**
 * CPU seconds of this process's children that have ended and been waited for (and of their own
 * waited-for children): /proc/self/stat's cutime + cstime. Measures a child process's whole run,
 * which a snapshot misses once it has ended. null where there is no /proc.
 */
export function endedChildrenCpuSeconds(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 of /proc/<pid>/stat: cutime and cstime are fields 16 and 17.
    return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** Busy CPU seconds of the whole machine so far (all processes, all tenants); null without /proc. */
export function machineCpuSeconds(): number | null {
  try {
    return machineBusyTicks() / CLOCK_TICKS;
  } catch {
    return null;
  }
}

function machineBusyTicks(): number {
  // cpu user nice system idle iowait irq softirq steal ...: busy = everything but idle and iowait.
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  return cpu.reduce((a, b) => a + b, 0) - cpu[3]! - cpu[4]!;
}

export function cpuSnapshot(): CpuSnapshot | null {
  if (!procInfo(process.pid)) return null;
  const procs = new Map<number, ProcInfo>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const p = procInfo(Number(entry));
    if (p) procs.set(p.pid, p);
  }
  return { at: performance.now(), procs, machine: machineBusyTicks() };
}

/**
 * Cores (1.0 = one core fully busy) used by `who` between two snapshots. Processes that started in
 * between count in full; those that ended in between are lost (short-lived, small).
 */
export function coresBetween(a: CpuSnapshot, b: CpuSnapshot, who: Party | 'machine'): number {
  const seconds = (b.at - a.at) / 1000;
  let ticks = 0;
  if (who === 'machine') ticks = b.machine - a.machine;
  else for (const p of b.procs.values()) if (who.match(p)) ticks += p.ticks - (a.procs.get(p.pid)?.ticks ?? 0);
  return Math.max(0, ticks) / CLOCK_TICKS / seconds;
}

export interface CpuShare {
  name: string;
  cores: number | null;
}

/** Cores of each party, then `other`: the rest of the machine. */
export function cpuShares(a: CpuSnapshot | null, b: CpuSnapshot | null, parties: Party[]): CpuShare[] {
  if (!a || !b) return [...parties.map((p) => ({ name: p.name, cores: null })), { name: 'other', cores: null }];
  const shares = parties.map((p) => ({ name: p.name, cores: coresBetween(a, b, p) }));
  const used = shares.reduce((sum, s) => sum + s.cores, 0);
  return [...shares, { name: 'other', cores: Math.max(0, coresBetween(a, b, 'machine') - used) }];
}
