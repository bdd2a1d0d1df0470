import { type AppError, isAppError } from '../../shared/errors';

/** The AppError `promise` rejects with, or undefined when it resolves; any other error is rethrown. */
async function rejection(promise: Promise<unknown>): Promise<AppError | undefined> {
  try {
    await promise;
    return undefined;
  } catch (err) {
    if (isAppError(err)) return err;
    throw err;
  }
}

/** The AppError code `promise` rejects with, or undefined when it resolves; any other error is rethrown. */
export async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  return (await rejection(promise))?.code;
}

/**
 * What a caller would see of the AppError `promise` rejects with: its code, HTTP status, detail and
 * field issues, as a plain object for `toMatchObject`. Resolving fails the test; any other error is rethrown.
 */
export async function appErrorOf(promise: Promise<unknown>): Promise<Pick<AppError, 'code' | 'status' | 'issues'> & { detail: string }> {
  const err = await rejection(promise);
  if (err === undefined) throw new Error('expected a failure');
  return { code: err.code, status: err.status, issues: err.issues, detail: err.message };
}
