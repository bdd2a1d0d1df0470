/**
 * The host's request body limit, as the real host keeps it (docs/real-host.md#request-body-limit):
 * FUNCTIONS_REQUEST_BODY_SIZE_LIMIT bytes, else 104857600. A body the host reads itself (buffered
 * mode, or a Content-Length body in stream mode, read for binding data) is refused past it.
 */
import type { IncomingMessage } from 'node:http';
import { DevhostError } from '../errors';

/** The real host's default (ScriptConstants.DefaultMaxRequestBodySize). */
const defaultRequestBodyLimit = 104_857_600;

/** The limit a FUNCTIONS_REQUEST_BODY_SIZE_LIMIT value sets: the host takes a whole number and ignores anything else. */
export function requestBodyLimit(setting: string | undefined): number {
  const text = setting?.trim() ?? '';
  return /^\d{1,15}$/.test(text) ? Number(text) : defaultRequestBodyLimit;
}

export function bodyTooLarge(limit: number): DevhostError {
  return new DevhostError('BodyTooLarge', `The request body is larger than ${limit} bytes (FUNCTIONS_REQUEST_BODY_SIZE_LIMIT)`, 413);
}

/** True when the request declares a Content-Length above the limit: refused before a byte is read. */
export function declaresTooMuch(req: IncomingMessage, limit: number): boolean {
  const declared = req.headers['content-length'];
  return declared !== undefined && Number(declared) > limit;
}
