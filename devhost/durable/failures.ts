/**
 * Failure texts as the real host produces them, because they reach user code (`Error.message` in
 * the orchestrator) and the status `output`. The .NET exception JSON in `Details` cannot be
 * reproduced byte for byte; its shape (type, message, stack) is kept.
 */
import type { FailureDetails } from './protocol';

const rpcExceptionType = 'Microsoft.Azure.WebJobs.Script.Workers.Rpc.RpcException';

/**
 * The worker reports a thrown error as RpcException "Result: Failure\nException: <message>\nStack:
 * <stack>"; the extension cuts out the part between "Exception:" and "Stack:", leading space included.
 */
export function activityFailure(name: string, error: Error): { Reason: string; Details: string; FailureDetails?: FailureDetails } {
  const stack = error.stack ?? '';
  const rpcMessage = `Result: Failure\nException: ${error.message}\nStack: ${stack}`;
  const details = JSON.stringify({
    $type: `${rpcExceptionType}, Microsoft.Azure.WebJobs.Script`,
    ClassName: rpcExceptionType,
    Message: rpcMessage,
    Data: null,
    InnerException: null,
    HelpURL: null,
    StackTraceString: null,
    RemoteStackTraceString: stack,
    RemoteStackIndex: 0,
    ExceptionMethod: null,
    HResult: -2146233088,
    Source: null,
    WatsonBuckets: null,
  });
  const structured = failureDetailsFromProvider(error.message);
  return {
    Reason: `Activity function '${name}' failed:  ${error.message}`,
    Details: details,
    ...(structured === undefined ? {} : { FailureDetails: structured }),
  };
}

/**
 * With `df.app.setExceptionPropertiesProvider`, durable-functions 3.5 replaces an activity's error
 * message with a JSON payload, which the extension (PR #3451) turns into `FailureDetails`.
 */
function failureDetailsFromProvider(message: string): FailureDetails | undefined {
  if (!message.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(message) as Record<string, unknown>;
    if (typeof parsed.errorType !== 'string' || typeof parsed.errorMessage !== 'string') return undefined;
    return {
      ErrorType: parsed.errorType,
      ErrorMessage: parsed.errorMessage,
      StackTrace: typeof parsed.stackTrace === 'string' ? parsed.stackTrace : undefined,
      IsNonRetriable: parsed.isNonRetriable === true,
      Properties:
        typeof parsed.properties === 'object' && parsed.properties !== null ? (parsed.properties as Record<string, unknown>) : undefined,
    };
  } catch {
    return undefined;
  }
}

export function orchestratorFailure(name: string, message: string): string {
  return `Orchestrator function '${name}' failed: ${message}`;
}

/** What a parent sees for a failed child: the child's reason, and "Message: …, StackTrace: …" details. */
export function subOrchestrationFailure(reason: string): { Reason: string; Details: string } {
  return { Reason: reason, Details: `Message: ${reason}, StackTrace: ` };
}
