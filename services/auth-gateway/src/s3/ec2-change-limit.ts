import type { TokenStore } from '../tokens/store';

export interface Ec2ChangeLimit {
  /** OS-EC2 credential changes (creations and deletions together) one user may make per window. */
  limit: number;
  windowMs: number;
}

export type Ec2ChangeVerdict = { ok: true } | { ok: false; retryAfterSeconds: number; message: string };

/**
 * Bounds how often one storage user may create or delete its own S3 credentials through OS-EC2:
 * each change writes an audit record, and a user looping create/delete would otherwise fill the
 * trail. The count is the login limits' counter (a fixed window in the token store, so it holds
 * across replicas; process memory without Redis), keyed by the user's row id: a user deleted and
 * re-created under the same name starts afresh, and the count follows no name.
 *
 * A change is counted before it is made, with one atomic increment: changes sent all at once
 * cannot pass the limit together. A request counted but then refused for another reason (an
 * unknown access key, the per-user cap) still counts: it was an attempt to change.
 */
export class Ec2ChangeLimiter {
  constructor(
    private readonly store: TokenStore,
    private readonly limits: Ec2ChangeLimit,
  ) {}

  async take(userId: string): Promise<Ec2ChangeVerdict> {
    const { count, resetInMs } = await this.store.recordFailure(`ec2-change:${userId}`, this.limits.windowMs);
    if (count <= this.limits.limit) return { ok: true };
    const retryAfterSeconds = Math.max(1, Math.ceil(resetInMs / 1000));
    return {
      ok: false,
      retryAfterSeconds,
      message: `Too many S3 credential changes: a user may create or delete at most ${this.limits.limit} in ${Math.round(this.limits.windowMs / 1000)} seconds; retry in ${retryAfterSeconds} seconds.`,
    };
  }
}
