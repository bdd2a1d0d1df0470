/**
 * What every call takes besides its arguments, named as the Azure SDK for JavaScript names it
 * (`OperationOptions.abortSignal`), so code that cancels Azure SDK calls cancels these the same way.
 */
export interface OperationOptions {
  /** Aborts the call: it rejects with the signal's reason (an `AbortError` unless the reason is an Error). */
  readonly abortSignal?: AbortSignal | undefined;
}
