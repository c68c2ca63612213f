export { RingError, SwiftConfError, SwiftDirError, ReconError } from './errors';
export type { ByteOrder, ParseRingOptions, Ring, RingDevice, RingWithAssignments } from './ring-types';
export { parseRing, readRingFile } from './ring';
export { DEFAULT_MAX_DECOMPRESSED_BYTES } from './gunzip';
export { parseSwiftConf, type ErasureCoding, type PolicyType, type StoragePolicy } from './swift-conf';
export { readSwiftDir, objectRingName, type SwiftDir } from './swift-dir';
export {
  fetchDiskUsage,
  fetchRecon,
  pollNodes,
  reconBaseUrl,
  type DiskUsage,
  type NodeDiskUsage,
  type PollOptions,
  type ReconNode,
  type ReconOptions,
} from './recon';
export {
  fetchReplication,
  fetchRingMd5s,
  fetchUnmounted,
  type ReplicationReport,
  type ReplicationType,
  type UnmountedDevice,
} from './recon-readers';
export {
  checkStepSafety,
  DEFAULT_FILL_LIMIT_PCT,
  SWIFT_RING_RELOAD_MS,
  type SafetyCheck,
  type StepSafety,
  type StepSafetyInput,
  type StepSafetyOptions,
} from './ring-safety';
export { mapConcurrent } from './pool';
export { IniError, parseIni, sectionItems, type IniFile } from './ini';
export {
  HEALTH_ENDPOINTS,
  HEALTH_READERS,
  ReconShapeError,
  type HealthEndpoint,
  type ReconDiskUsageEntry,
  type ReconHealthAnswers,
  type ReconObjectReplication,
  type ReconReplication,
  type ReconReplicationStats,
  type ReconUnmountedEntry,
} from './recon-health-shapes';
export {
  MAX_RECON_VALUE_BYTES,
  isEndpointError,
  pollNodesHealth,
  readNodeHealth,
  type HealthPollOptions,
  type NodeHealth,
  type NodeHealthRecon,
  type ReconEndpointError,
} from './recon-health';
