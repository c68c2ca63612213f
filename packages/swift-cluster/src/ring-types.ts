/** One device of a ring (a hole left by a removed device is not a device). */
export interface RingDevice {
  /** Ring-local id: index in the ring's device list and the value stored in the assignment rows. */
  id: number;
  /** 1 when the ring predates regions. */
  region: number;
  zone: number;
  ip: string;
  port: number;
  /** `ip` when the ring predates replication networks. */
  replicationIp: string;
  /** `port` when the ring predates replication networks. */
  replicationPort: number;
  /** Directory name under the node's devices path (e.g. `sdb1`). */
  device: string;
  weight: number;
  /** Free text; `''` when absent. */
  meta: string;
}

export type ByteOrder = 'little' | 'big';

/** What a ring file's JSON header says. */
export interface Ring {
  devices: RingDevice[];
  /** 32 − `part_shift`; the ring has 2^partPower partitions. */
  partPower: number;
  /**
   * The header's `replica_count`: the number of `replica2part2dev` rows, an integer. A ring built
   * with 2.5 replicas has 3 rows (the last one half as long); `RingWithAssignments.replicas` has 2.5.
   */
  replicaCount: number;
  /** Byte order of the assignment rows. */
  byteorder: ByteOrder;
  /** The builder's version counter, when the header has one. */
  version?: number;
  /** Set while a partition power increase is in progress. */
  nextPartPower?: number;
}

export interface RingWithAssignments extends Ring {
  /**
   * `replica2part2dev`: row r, index p is the id of the device holding replica r of partition p.
   * Every row but the last has 2^partPower entries; with a fractional replica count the last is shorter.
   */
  assignments: Uint16Array[];
  /** The replica count as Swift computes it: full rows plus the last row's fraction (e.g. 2.5). */
  replicas: number;
}

export interface ParseRingOptions {
  /** Also read and check the partition assignment rows (default: header only). */
  withAssignments?: boolean;
  /** Refuse files that decompress to more than this (default 512 MiB). */
  maxDecompressedBytes?: number;
}
