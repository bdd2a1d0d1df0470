import { isAppError } from '../../shared/errors';

/** The AppError code `promise` rejects with, or undefined when it resolves; any other error is rethrown. */
export async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (err) {
    if (isAppError(err)) return err.code;
    throw err;
  }
}
