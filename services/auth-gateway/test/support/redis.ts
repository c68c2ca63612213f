import pino from 'pino';
import { createRedis, type RedisClient } from '../../src/redis';

/** The Redis the tests use: 127.0.0.1:6379 unless TEST_REDIS_URL names another (README). */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A client of TEST_REDIS_URL that logs nothing. */
export const testRedis = (): RedisClient => createRedis(TEST_REDIS_URL, pino({ level: 'silent' }));
