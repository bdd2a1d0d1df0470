/**
 * The one error type of the devhost: every failure it raises of its own is a `DevhostError` with a
 * code saying what failed, so a caller tells them apart by `code` (not by class or message), as the
 * app does with its AppError codes. A code that the host answers over HTTP carries the status too.
 */
export type DevhostErrorCode =
  /** local.settings.json, host.json or a `%setting%` expression the real host would refuse. */
  | 'SettingsInvalid'
  /** The app's package.json or its entry point cannot be loaded. */
  | 'AppLoadFailed'
  /** A function's route template the real host would refuse. */
  | 'RouteTemplateInvalid'
  /** A request body over FUNCTIONS_REQUEST_BODY_SIZE_LIMIT (answered 413). */
  | 'BodyTooLarge'
  /** An orchestration's replay does not match its history (the real host's non-determinism errors). */
  | 'ReplayFailed'
  /** A Durable client call the extension's HTTP API refuses (its `status`: 400, 404, 413). */
  | 'DurableClientRefused'
  /** A binding's storage connection setting is missing or names identity-based access. */
  | 'ConnectionInvalid'
  /** A binding expression (`{name}`) with no value in the trigger's data. */
  | 'BindingExpressionInvalid'
  /** The virtual clock's advance did not settle in time (the admin API answers 504). */
  | 'SettleTimeout'
  /** A timer schedule or time zone the real host would refuse. */
  | 'ScheduleInvalid';

export class DevhostError extends Error {
  override readonly name = 'DevhostError';

  constructor(
    readonly code: DevhostErrorCode,
    message: string,
    /** The HTTP status the devhost answers it with, where it answers one. */
    readonly status?: number,
  ) {
    super(message);
  }
}

export function isDevhostError(err: unknown, code?: DevhostErrorCode): err is DevhostError {
  return err instanceof DevhostError && (code === undefined || err.code === code);
}
