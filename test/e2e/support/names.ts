/** Resource names for e2e tests: suites share one storage account and run in parallel. */
import { randomBytes } from 'node:crypto';

/** `prefix` plus a random suffix, so every test gets its own gate, job, schedule, stream or sequence. */
export const unique = (prefix: string): string => `${prefix}-${randomBytes(5).toString('hex')}`;
