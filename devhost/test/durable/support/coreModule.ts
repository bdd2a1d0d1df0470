/**
 * The `@azure/functions-core` module for in-process durable tests. Jest has its own module registry
 * (the require hook of `installCoreApi` does not see it), so test files map the module here with
 * `jest.mock('@azure/functions-core', () => require('./support/coreModule').coreApi, { virtual: true })`.
 */
import { Registry } from '../../../core/coreApi';

export const registry = new Registry();
/** @public Reached through jest.mock's require, which knip cannot follow. */
export const coreApi = registry.coreApi();
