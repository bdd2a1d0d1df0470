/**
 * Invokes a registered function exactly as the Node worker does: through the programming model the
 * library registered (`getInvocationModel` → `getArguments` → `invokeFunction` → `getResponse`),
 * with the pre/post invocation hooks around the call. Trigger adapters (HTTP, queue, timer, durable)
 * only build `inputData`/`triggerMetadata` and read the response.
 */
import { randomUUID } from 'node:crypto';
import { types } from 'node:util';

import type { Registry } from './coreApi';
import type { CoreInvocationContext, RpcInvocationResponse, RpcLogCategory, RpcLogLevel, RpcParameterBinding, RpcTypedData } from './types';

export interface InvocationRequest {
  readonly functionName: string;
  readonly inputData: RpcParameterBinding[];
  readonly triggerMetadata?: Record<string, RpcTypedData>;
  readonly invocationId?: string;
  readonly retryContext?: { retryCount: number; maxRetryCount: number };
  /**
   * A client is holding a connection open for this invocation (HTTP). Such invocations may live
   * as long as the client wants (server-sent events), so `settle()` does not wait for them.
   */
  readonly clientHeld?: boolean;
  /**
   * The invocation's W3C traceparent (HTTP: the host's span for the request, ./traceContext.ts). The
   * real host gives a queue invocation none (devhost/docs/real-host.md#trace-context); others get none here either.
   */
  readonly traceParent?: string;
}

export type InvocationOutcome =
  | {
      readonly ok: true;
      readonly invocationId: string;
      readonly response: RpcInvocationResponse;
      /** What the handler returned, after postInvocation hooks (in stream mode the response itself went through the proxy). */
      readonly result: unknown;
      readonly durationMs: number;
    }
  | { readonly ok: false; readonly invocationId: string; readonly error: Error; readonly durationMs: number };

export type InvocationLogger = (
  functionName: string,
  invocationId: string,
  level: RpcLogLevel,
  category: RpcLogCategory,
  message: string,
) => void;

/**
 * The app may throw another realm's Error (it is loaded through Node's own require, outside a test
 * runner's sandbox), which fails `instanceof Error` here but is still an error with a stack.
 */
function asError(value: unknown): Error {
  if (value instanceof Error || types.isNativeError(value)) return value;
  return new Error(typeof value === 'string' ? value : JSON.stringify(value));
}

/** The outcome of an invocation that failed before the function ran (an input that cannot bind). */
export function failedBeforeRun(err: unknown): InvocationOutcome {
  return { ok: false, invocationId: randomUUID(), error: asError(err), durationMs: 0 };
}

export class Invoker {
  /** Invocations under way, so shutdown can wait for them: the function's name and whether a client holds it. */
  readonly inFlight = new Map<Promise<unknown>, { readonly functionName: string; readonly held: boolean }>();

  constructor(
    private readonly registry: Registry,
    private readonly log: InvocationLogger = () => undefined,
  ) {}

  invoke(request: InvocationRequest): Promise<InvocationOutcome> {
    const run = this.run(request);
    this.inFlight.set(run, { functionName: request.functionName, held: request.clientHeld === true });
    void run.finally(() => this.inFlight.delete(run));
    return run;
  }

  private async run(request: InvocationRequest): Promise<InvocationOutcome> {
    const started = performance.now();
    const invocationId = request.invocationId ?? randomUUID();
    const fn = this.registry.byName(request.functionName);
    const model = this.registry.programmingModel;
    const elapsed = (): number => performance.now() - started;
    if (fn === undefined || model === undefined) {
      return { ok: false, invocationId, error: new Error(`Function ${request.functionName} is not registered`), durationMs: elapsed() };
    }
    const coreCtx: CoreInvocationContext = {
      invocationId,
      request: {
        invocationId,
        functionId: fn.metadata.functionId ?? fn.metadata.name,
        inputData: request.inputData,
        triggerMetadata: request.triggerMetadata ?? {},
        traceContext: { traceParent: request.traceParent ?? '', traceState: '', attributes: {} },
        ...(request.retryContext === undefined ? {} : { retryContext: request.retryContext }),
      },
      metadata: fn.metadata,
      log: (level, category, message) => this.log(fn.metadata.name, invocationId, level, category, message),
    };
    try {
      const invocationModel = await model.getInvocationModel(coreCtx);
      const args = await invocationModel.getArguments();
      const hookData: Record<string, unknown> = {};
      const pre: Record<string, unknown> = {
        hookData,
        invocationContext: args.context,
        inputs: args.inputs,
        functionCallback: fn.callback,
      };
      coreCtx.state = 'preInvocationHooks';
      for (const hook of this.registry.hooks.preInvocation) await hook(pre);
      coreCtx.state = 'invocation';
      let result: unknown;
      let error: unknown;
      try {
        result = await invocationModel.invokeFunction(
          args.context,
          pre.inputs as unknown[],
          pre.functionCallback as (...a: unknown[]) => unknown,
        );
      } catch (err) {
        error = err;
      }
      const post: Record<string, unknown> = { hookData, invocationContext: args.context, inputs: pre.inputs, result, error };
      coreCtx.state = 'postInvocationHooks';
      for (const hook of this.registry.hooks.postInvocation) await hook(post);
      coreCtx.state = undefined;
      if (post.error !== undefined && post.error !== null)
        return { ok: false, invocationId, error: asError(post.error), durationMs: elapsed() };
      const response = await invocationModel.getResponse(args.context, post.result);
      return { ok: true, invocationId, response, result: post.result, durationMs: elapsed() };
    } catch (err) {
      return { ok: false, invocationId, error: asError(err), durationMs: elapsed() };
    }
  }

  /**
   * Stops tracking an invocation: a server-sent-events response lives as long as its client, and
   * shutdown closes those connections instead of waiting for them.
   */
  release(invocation: Promise<unknown>): void {
    this.inFlight.delete(invocation);
  }

  /** Number of invocations under way that no client holds (timer, queue, extension work). */
  backgroundCount(): number {
    return this.background().length;
  }

  /** The functions of the invocations under way that no client holds, one entry per invocation. */
  background(): string[] {
    return [...this.inFlight.values()].filter((i) => !i.held).map((i) => i.functionName);
  }

  /** Resolves true once every invocation under way has finished, false if the timeout passes first. */
  drain(timeoutMs: number): Promise<boolean> {
    return this.waitFor(() => [...this.inFlight.keys()], timeoutMs);
  }

  /** Like `drain`, but ignores client-held (HTTP) invocations. */
  settle(timeoutMs: number): Promise<boolean> {
    return this.waitFor(() => [...this.inFlight].filter(([, i]) => !i.held).map(([p]) => p), timeoutMs);
  }

  private async waitFor(pending: () => Promise<unknown>[], timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (let list = pending(); list.length > 0; list = pending()) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) return false;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled(list), new Promise((r) => (timer = setTimeout(r, remaining)))]);
      clearTimeout(timer);
    }
    return true;
  }
}
