import type { Router } from 'express';
import type { Deps } from '../deps';
import { osEc2Router } from './os-ec2-route';
import { s3TokensRouter } from './s3tokens-route';

/** Everything S3 under the /auth root: s3tokens (Swift's s3token) and Keystone's OS-EC2 credential API. */
export function s3Routers(deps: Deps): Router[] {
  return [s3TokensRouter(deps), osEc2Router(deps)];
}
