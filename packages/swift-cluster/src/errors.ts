/** Error types of this package. Each names what it is about (a file, a node) and why, never guesses. */

/** A ring file that cannot be read as a Swift ring: `file` is its name, `reason` what is wrong. */
export class RingError extends Error {
  override readonly name = 'RingError';
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`);
  }
}

/** swift.conf that Swift itself would refuse (or that this reader cannot read the way Swift does). */
export class SwiftConfError extends Error {
  override readonly name = 'SwiftConfError';
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`);
  }
}

/** A swift dir whose object rings and storage policies do not match; lists every mismatch. */
export class SwiftDirError extends Error {
  override readonly name = 'SwiftDirError';
  constructor(
    readonly dir: string,
    readonly problems: string[],
  ) {
    super(`${dir}: ${problems.join('; ')}`);
  }
}

/** A storage node whose recon answer is unusable this round (unreachable, timeout, HTTP error, bad body). */
export class ReconError extends Error {
  override readonly name = 'ReconError';
  constructor(
    readonly node: string,
    readonly reason: string,
  ) {
    super(`recon ${node}: ${reason}`);
  }
}
