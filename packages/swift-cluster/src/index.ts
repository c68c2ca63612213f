export { RingError, SwiftConfError, SwiftDirError, ReconError } from './errors';
export type { ByteOrder, ParseRingOptions, Ring, RingDevice, RingWithAssignments } from './ring-types';
export { parseRing, readRingFile } from './ring';
export { DEFAULT_MAX_DECOMPRESSED_BYTES } from './gunzip';
export { parseSwiftConf, type ErasureCoding, type PolicyType, type StoragePolicy } from './swift-conf';
export { readSwiftDir, objectRingName, type SwiftDir } from './swift-dir';
export {
  fetchDiskUsage,
  pollNodes,
  type DiskUsage,
  type NodeDiskUsage,
  type PollOptions,
  type ReconNode,
  type ReconOptions,
} from './recon';
export { mapConcurrent } from './pool';
export { IniError, parseIni, sectionItems, type IniFile } from './ini';
